import { filesEndpointOf, multipartUpload } from "../../files/provider-files.ts";
import { providerKeyOf } from "../../../providers/account-key.ts";
import type { StoredFile } from "../../files/types.ts";
import { AZURE_FILES_API_VERSION } from "../../files/provider-files.ts";
import { azureAuthHeaders, azureOpenAIOrigin } from "../../../providers/azure/endpoints.ts";
import { loadProvider } from "../../../providers/registry.ts";
import type { ProviderTarget } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import { joinUrl } from "../../../providers/url.ts";
import {
  BATCH_STATUSES,
  type BatchEndpoint,
  type BatchError,
  type BatchInputLine,
  type NativeBatchApi,
  type NativeBatchContext,
  type NativeBatchState,
  type NativeSubmission,
} from "../types.ts";
import { callProviderJson, jsonBody, providerJsonLines } from "./provider-http.ts";
import { count, resultLineId } from "./result-lines.ts";

/**
 * OpenAI's Batch API (https://platform.openai.com/docs/api-reference/batch) and the providers that speak it:
 *   POST <base>/files (purpose batch)  -> the input file at the provider
 *   POST <base>/batches {input_file_id, endpoint, completion_window: "24h", metadata}
 *   GET  <base>/batches/{id}           -> status, request_counts, errors, output_file_id, error_file_id
 *   GET  <base>/files/{id}/content     -> the output and error JSONL, already in OpenAI's result-line shape
 *   POST <base>/batches/{id}/cancel
 * Flavours: `openai`; `groq` (OpenAI-compatible batches, chat only: https://console.groq.com/docs/batch); and
 * `azure-openai` global batch (https://learn.microsoft.com/azure/ai-foundry/openai/how-to/batch): under
 * `/openai/...?api-version=` (2024-10-21 or later; lines' `url` without `/v1`) or the v1 API `/openai/v1/...`, and
 * with the deployment name as every line's `model`, so Azure gets its own rewritten copy of the input file.
 * Providers take only a 24-hour window: the gateway keeps its own window and expiry.
 */

interface Flavour {
  endpoints(target: ProviderTarget): ReadonlySet<BatchEndpoint>;
  /** `<base><path>` with auth headers; `path` starts with `/batches` or `/files`. */
  request(target: ProviderTarget, path: string): Promise<{ url: string; headers: Record<string, string> }>;
  /** The `endpoint` of the create call. */
  endpointName(target: ProviderTarget, endpoint: BatchEndpoint): string;
  /** Present when the provider needs its own copy of the lines (Azure): each line as the provider takes it. */
  rewriteLine?(target: ProviderTarget, line: BatchInputLine): Record<string, unknown>;
}

interface OpenAIDetails {
  input_file_id?: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
}

async function passthroughRequest(target: ProviderTarget, path: string) {
  const adapter = await loadProvider(target.provider);
  const endpoint = await adapter?.passthrough?.(target, {});
  if (!endpoint) throw new UpstreamError(400, `Provider '${target.provider}' has no batch API.`);
  return { url: joinUrl(endpoint.baseUrl, path), headers: endpoint.headers };
}

const OPENAI_ENDPOINTS: ReadonlySet<BatchEndpoint> = new Set([
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/embeddings",
  "/v1/responses",
]);

const openaiFlavour: Flavour = {
  endpoints: () => OPENAI_ENDPOINTS,
  request: passthroughRequest,
  endpointName: (_target, endpoint) => endpoint,
};

const groqFlavour: Flavour = {
  endpoints: () => new Set<BatchEndpoint>(["/v1/chat/completions"]),
  request: passthroughRequest,
  endpointName: (_target, endpoint) => endpoint,
};

/** Azure's v1 API takes what OpenAI's does; dated versions run chat completions only. */
const AZURE_V1_ENDPOINTS = OPENAI_ENDPOINTS;
const AZURE_DATED_ENDPOINTS: ReadonlySet<BatchEndpoint> = new Set(["/v1/chat/completions"]);

const isAzureV1 = (target: ProviderTarget) => target.azure?.apiVersion === "v1";
/** Batches need 2024-10-21 or later: an older configured version is raised to it. */
const azureBatchVersion = (target: ProviderTarget) => {
  const version = target.azure?.apiVersion;
  return version && version >= AZURE_FILES_API_VERSION ? version : AZURE_FILES_API_VERSION;
};

const azureFlavour: Flavour = {
  endpoints: (target) => (isAzureV1(target) ? AZURE_V1_ENDPOINTS : AZURE_DATED_ENDPOINTS),
  async request(target, path) {
    const origin = azureOpenAIOrigin(target);
    const headers = { ...azureAuthHeaders(target.apiKey), ...target.forwardHeaders };
    if (isAzureV1(target)) return { url: joinUrl(origin, `/openai/v1${path}`), headers };
    const url = `${joinUrl(origin, `/openai${path}`)}?api-version=${encodeURIComponent(azureBatchVersion(target))}`;
    return { url, headers };
  },
  // Azure documents `/chat/completions` as the create call's endpoint on every API version.
  endpointName: (_target, endpoint) => endpoint.replace(/^\/v1/, ""),
  rewriteLine(target, line) {
    const url = isAzureV1(target) ? line.url : line.url.replace(/^\/v1/, "");
    const model = target.azure?.deploymentId || line.body.model;
    return { custom_id: line.custom_id, method: "POST", url, body: { ...line.body, model } };
  },
};

const FLAVOURS: Record<string, Flavour> = {
  openai: openaiFlavour,
  groq: groqFlavour,
  "azure-openai": azureFlavour,
};

function flavourOf(target: ProviderTarget): Flavour {
  const flavour = FLAVOURS[target.provider];
  if (!flavour) throw new UpstreamError(400, `Provider '${target.provider}' has no OpenAI-style batch API.`);
  return flavour;
}

async function upload(
  ctx: NativeBatchContext,
  file: Pick<StoredFile, "file" | "contentType">,
  content: ReadableStream<Uint8Array>,
  size: number,
): Promise<string> {
  const endpoint = await filesEndpointOf(ctx.target);
  const form = multipartUpload(file, content, size);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(endpoint.headers)) headers[name.toLowerCase()] = value;
  headers["content-type"] = form.contentType;
  headers["content-length"] = String(form.length);
  const answer = await callProviderJson({ url: endpoint.url, method: "POST", headers, body: form.body }, ctx);
  if (typeof answer?.id !== "string" || !answer.id) {
    throw new UpstreamError(502, "The provider accepted the file but answered no file id.", {
      code: "upstream_invalid_response",
    });
  }
  return answer.id;
}

/** The rewritten lines as JSONL bytes (read twice: once to count them, once to send them). */
function rewrittenJsonl(
  submission: NativeSubmission,
  flavour: Flavour,
  target: ProviderTarget,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const lines = submission.lines()[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await lines.next();
      if (next.done) controller.close();
      else controller.enqueue(encoder.encode(`${JSON.stringify(flavour.rewriteLine!(target, next.value))}\n`));
    },
    async cancel() {
      await lines.return?.();
    },
  });
}

async function byteLength(stream: ReadableStream<Uint8Array>): Promise<number> {
  let size = 0;
  for await (const chunk of stream) size += chunk.byteLength;
  return size;
}

/**
 * The provider's file id of the batch's input: the gateway file's linked copy at this account, else a new upload
 * (returned as `linkable` so the engine links it); Azure always gets a rewritten copy of its own (never linked: its
 * content differs from the gateway's file).
 */
async function providerInput(
  submission: NativeSubmission,
  flavour: Flavour,
  ctx: NativeBatchContext,
): Promise<{ fileId: string; linkable: boolean }> {
  if (flavour.rewriteLine) {
    const size = await byteLength(rewrittenJsonl(submission, flavour, ctx.target));
    const file = {
      file: { ...submission.inputFile.file, filename: `${submission.batchId}.jsonl`, purpose: "batch" as const },
      contentType: "application/jsonl",
    };
    return { fileId: await upload(ctx, file, rewrittenJsonl(submission, flavour, ctx.target), size), linkable: false };
  }
  const linked = submission.inputFile.providerFiles[providerKeyOf(ctx.target)];
  if (linked) return { fileId: linked, linkable: false };
  const fileId = await upload(ctx, submission.inputFile, await submission.content(), submission.inputFile.file.bytes);
  return { fileId, linkable: true };
}

/** At most 16 pairs (OpenAI's limit): the gateway's batch id rides along when there is room. */
function metadataOf(submission: NativeSubmission): Record<string, string> {
  const metadata = { ...submission.metadata };
  if (Object.keys(metadata).length < 16) metadata.gateway_batch_id = submission.batchId;
  return metadata;
}

function errorsOf(batch: any): BatchError[] | undefined {
  const data = batch?.errors?.data;
  if (!Array.isArray(data) || data.length === 0) return undefined;
  return data.map((error: any) => ({
    code: String(error?.code ?? "invalid_request"),
    message: String(error?.message ?? "The provider refused the batch."),
    param: typeof error?.param === "string" ? error.param : null,
    line: typeof error?.line === "number" ? error.line : null,
  }));
}

const KNOWN_STATUSES = new Set<string>(BATCH_STATUSES);

/** A provider Batch object as the gateway's state. Azure may send capitalised statuses and null counts. */
function stateOf(batch: any, previous: OpenAIDetails): NativeBatchState {
  const status = String(batch?.status ?? "").toLowerCase();
  const counts = batch?.request_counts ?? {};
  const errors = errorsOf(batch);
  return {
    status: (KNOWN_STATUSES.has(status) ? status : "in_progress") as NativeBatchState["status"],
    request_counts: { total: count(counts.total), completed: count(counts.completed), failed: count(counts.failed) },
    ...(errors ? { errors } : {}),
    details: {
      ...previous,
      output_file_id: typeof batch?.output_file_id === "string" ? batch.output_file_id : null,
      error_file_id: typeof batch?.error_file_id === "string" ? batch.error_file_id : null,
    },
  };
}

const detailsOf = (state: NativeBatchState) => (state.details ?? {}) as OpenAIDetails;

export const openAIBatches: NativeBatchApi = {
  supports(target, endpoint) {
    return FLAVOURS[target.provider]?.endpoints(target).has(endpoint) === true;
  },

  async submit(submission, ctx) {
    const flavour = flavourOf(ctx.target);
    const input = await providerInput(submission, flavour, ctx);
    const { url, headers } = await flavour.request(ctx.target, "/batches");
    const batch = await callProviderJson(
      jsonBody("POST", url, headers, {
        input_file_id: input.fileId,
        endpoint: flavour.endpointName(ctx.target, submission.endpoint),
        completion_window: "24h",
        metadata: metadataOf(submission),
      }),
      ctx,
    );
    if (typeof batch?.id !== "string" || !batch.id) {
      throw new UpstreamError(502, "The provider answered a batch without an id.", { type: "server_error" });
    }
    return {
      providerBatchId: batch.id,
      ...(input.linkable ? { providerFileId: input.fileId } : {}),
      state: stateOf(batch, { input_file_id: input.fileId }),
    };
  },

  async poll(providerBatchId, previous, ctx) {
    const { url, headers } = await flavourOf(ctx.target).request(
      ctx.target,
      `/batches/${encodeURIComponent(providerBatchId)}`,
    );
    return stateOf(await callProviderJson({ url, method: "GET", headers }, ctx), detailsOf(previous));
  },

  async *results(providerBatchId, state, ctx) {
    const flavour = flavourOf(ctx.target);
    const details = detailsOf(state);
    for (const fileId of [details.output_file_id, details.error_file_id]) {
      if (!fileId) continue;
      const { url, headers } = await flavour.request(ctx.target, `/files/${encodeURIComponent(fileId)}/content`);
      for await (const item of providerJsonLines({ url, method: "GET", headers }, ctx)) {
        if (typeof item?.custom_id !== "string") continue;
        yield {
          id: typeof item.id === "string" ? item.id : resultLineId(providerBatchId, item.custom_id),
          custom_id: item.custom_id,
          response: item.response ?? null,
          error: item.error ?? null,
        };
      }
    }
  },

  async cancel(providerBatchId, _state, ctx) {
    const { url, headers } = await flavourOf(ctx.target).request(
      ctx.target,
      `/batches/${encodeURIComponent(providerBatchId)}/cancel`,
    );
    await callProviderJson({ url, method: "POST", headers }, ctx);
  },
};
