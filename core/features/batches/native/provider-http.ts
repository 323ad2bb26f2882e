import type { Readable } from "node:stream";
import { requestUpstream, type UpstreamReply } from "../../../providers/upstream/client.ts";
import { redirectError } from "../../../providers/upstream/failures.ts";
import { mapUpstreamError } from "../../../providers/errors.ts";
import { type UpstreamRequest, UpstreamError } from "../../../providers/types.ts";
import type { TrustedHosts } from "../../../security/custom-host.ts";

/**
 * Control calls to a provider's own APIs (batches, files, fine-tuning jobs): one request through the guarded
 * upstream client, its answer read as JSON or streamed as JSONL lines. A non-2xx answer becomes an UpstreamError
 * in OpenAI's error shape (the provider's message, never the request's headers, so no credential leaks).
 */
export interface ProviderCallOptions {
  trustedHosts: TrustedHosts;
  signal: AbortSignal;
  timeoutMs: number;
}

/**
 * The request; a large body (a batch's requests, a file) goes as a Node Readable, streamed by undici without
 * being held whole.
 */
export type ProviderRequest = Omit<UpstreamRequest, "body"> & { body?: UpstreamRequest["body"] | Readable };

async function send(request: ProviderRequest, options: ProviderCallOptions): Promise<UpstreamReply> {
  const reply = await requestUpstream(request as UpstreamRequest, {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    trusted: options.trustedHosts,
  });
  if (reply.status >= 300 && reply.status < 400) {
    await reply.discard();
    throw redirectError(reply);
  }
  if (reply.status >= 400) throw mapUpstreamError(reply.status, await reply.text());
  return reply;
}

/** Sends the request and parses the 2xx answer as JSON (502 when it is not). */
export async function callProviderJson<T = any>(request: ProviderRequest, options: ProviderCallOptions): Promise<T> {
  const reply = await send(request, options);
  const text = await reply.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamError(502, "The provider answered with a body that is not JSON.", {
      type: "server_error",
      code: "upstream_invalid_json",
    });
  }
}

/**
 * Sends the request and yields the 2xx answer's non-empty lines, parsed as JSON, as they arrive (a results file
 * may be large: it is never held whole). A line that is not JSON ends the iteration with a 502.
 */
export async function* providerJsonLines(request: ProviderRequest, options: ProviderCallOptions): AsyncGenerator<any> {
  const reply = await send(request, options);
  const decoder = new TextDecoder();
  let pending = "";
  try {
    for await (const chunk of reply.body) {
      pending += decoder.decode(chunk, { stream: true });
      let newline = pending.indexOf("\n");
      while (newline !== -1) {
        const line = pending.slice(0, newline);
        pending = pending.slice(newline + 1);
        if (line.trim()) yield parseLine(line);
        newline = pending.indexOf("\n");
      }
    }
    pending += decoder.decode();
    if (pending.trim()) yield parseLine(pending);
  } catch (error) {
    throw error instanceof UpstreamError ? error : reply.failure(error);
  } finally {
    reply.release();
  }
}

/** Sends the request and answers the 2xx body as a web stream (a file's content, copied as it arrives). */
export async function providerStream(
  request: ProviderRequest,
  options: ProviderCallOptions,
): Promise<ReadableStream<Uint8Array>> {
  const reply = await send(request, options);
  const chunks = reply.body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) {
          reply.release();
          controller.close();
        } else controller.enqueue(next.value);
      } catch (error) {
        controller.error(reply.failure(error));
      }
    },
    async cancel() {
      await reply.discard();
    },
  });
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new UpstreamError(502, "The provider's results file has a line that is not JSON.", {
      type: "server_error",
      code: "upstream_invalid_json",
    });
  }
}

/** A JSON request body with its content type. */
export function jsonBody(
  method: "POST" | "PUT",
  url: string,
  headers: Record<string, string>,
  body: unknown,
): ProviderRequest {
  return { url, method, headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(body) };
}

/** Unix seconds from a provider timestamp: seconds, or an RFC 3339 string (Anthropic, some Azure versions). */
export function unixSeconds(value: unknown): number | null {
  if (typeof value === "number" && Number.isFinite(value)) return Math.floor(value);
  if (typeof value === "string" && value) {
    const ms = Date.parse(value);
    if (Number.isFinite(ms)) return Math.floor(ms / 1000);
  }
  return null;
}
