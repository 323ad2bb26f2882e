import type {
  BatchEndpoint,
  BatchInputLine,
  NativeBatchContext,
  NativeSubmission,
} from "../../../../core/features/batches/types.ts";
import type { StoredFile } from "../../../../core/features/files/types.ts";
import type { ProviderTarget } from "../../../../core/providers/types.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/** A submission over in-memory lines, as the batch engine would hand it to a native adapter. */
export function submissionOf(
  endpoint: BatchEndpoint,
  bodies: Array<{ custom_id: string; body: Record<string, any> }>,
  options: { providerFiles?: Record<string, string>; batchId?: string } = {},
): NativeSubmission {
  const lines: BatchInputLine[] = bodies.map((item, index) => ({
    line: index + 1,
    custom_id: item.custom_id,
    method: "POST",
    url: endpoint,
    body: item.body,
  }));
  const text = lines.map(({ line: _line, ...rest }) => JSON.stringify(rest)).join("\n") + "\n";
  const inputFile: StoredFile = {
    file: {
      id: "file-gateway-input",
      object: "file",
      bytes: Buffer.byteLength(text),
      created_at: 1_700_000_000,
      expires_at: null,
      filename: "input.jsonl",
      purpose: "batch",
      status: "processed",
      status_details: null,
    },
    owner: { organisationId: "org_1", workspaceId: "ws_1" },
    blobKey: "files/org_1/ws_1/file-gateway-input",
    contentType: "application/jsonl",
    providerFiles: options.providerFiles ?? {},
  };
  return {
    batchId: options.batchId ?? "batch_gateway_1",
    endpoint,
    completionWindow: "24h",
    metadata: { team: "tests" },
    inputFile,
    async *lines() {
      yield* lines;
    },
    async content() {
      return new Response(text).body!;
    },
  };
}

export function contextOf(target: ProviderTarget): NativeBatchContext {
  return {
    target,
    trustedHosts: parseTrustedHosts(["127.0.0.1"]),
    signal: new AbortController().signal,
    timeoutMs: 10_000,
  };
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}
