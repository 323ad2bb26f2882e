import { Readable } from "node:stream";
import { anthropicErrorStatus } from "../../../providers/anthropic/errors.ts";
import { anthropicHeaders, anthropicUrl } from "../../../providers/anthropic/http.ts";
import { fromAnthropicMessage, toAnthropicMessagesRequest } from "../../../providers/anthropic/messages.ts";
import type { ProviderTarget, TransformContext } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import type {
  BatchEndpoint,
  BatchInputLine,
  BatchResultLine,
  NativeBatchApi,
  NativeBatchContext,
  NativeBatchState,
} from "../types.ts";
import { callProviderJson, providerJsonLines } from "./provider-http.ts";
import {
  RenamedIds,
  count,
  errorLine,
  resultLineId,
  noteRefused,
  refusedResults,
  type RefusedLine,
} from "./result-lines.ts";

/**
 * Anthropic Message Batches (https://docs.anthropic.com/en/api/creating-message-batches):
 *   POST /v1/messages/batches {requests: [{custom_id, params}]}       -> a message_batch
 *   GET  /v1/messages/batches/{id}                                      -> processing_status, request_counts
 *   GET  /v1/messages/batches/{id}/results                              -> JSONL of {custom_id, result}
 *   POST /v1/messages/batches/{id}/cancel
 * `/v1/chat/completions` lines are translated with the chat adapter's transform (and their results back into chat
 * completions); `/v1/messages` lines go as they are. The results are read from the target's own base URL, never
 * from the `results_url` the provider names (a custom host's answer must not send the gateway elsewhere).
 */

/** Anthropic's rule for a request's custom_id. */
const ANTHROPIC_CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;
/** Ids the adapter gives lines whose custom_id Anthropic would refuse (an original with this shape is renamed too). */
const RENAMED_PREFIX = "gw-line-";

interface AnthropicDetails {
  endpoint: BatchEndpoint;
  /** Sent custom_id -> the line's own, for lines whose custom_id Anthropic would refuse. */
  renamed?: Record<string, string>;
  /** Lines never sent: the transform refused them. */
  refused?: RefusedLine[];
  processing_status?: string;
  cancel_initiated?: boolean;
}

const SUPPORTED: ReadonlySet<BatchEndpoint> = new Set(["/v1/chat/completions", "/v1/messages"]);

const transformContext = (target: ProviderTarget) => ({ target }) as TransformContext;

function batchUrl(ctx: NativeBatchContext, path = ""): string {
  return anthropicUrl(transformContext(ctx.target), `/messages/batches${path}`);
}

function headersOf(ctx: NativeBatchContext): Record<string, string> {
  return anthropicHeaders(transformContext(ctx.target));
}

/** The Messages params of one line. Throws UpstreamError for what Anthropic cannot do. */
function paramsOf(line: BatchInputLine, endpoint: BatchEndpoint): Record<string, unknown> {
  if (endpoint === "/v1/messages") {
    const { stream: _stream, ...params } = line.body;
    return params;
  }
  return toAnthropicMessagesRequest(line.body, { model: line.body.model });
}

/** Maps a provider message_batch to the gateway's state, keeping what earlier calls learned. */
function stateOf(batch: any, details: AnthropicDetails): NativeBatchState {
  const counts = batch?.request_counts ?? {};
  const refused = details.refused?.length ?? 0;
  const succeeded = count(counts.succeeded);
  const failed = count(counts.errored) + count(counts.canceled) + count(counts.expired) + refused;
  const total = succeeded + failed + count(counts.processing);
  const processing = String(batch?.processing_status ?? "in_progress");
  const cancelInitiated = details.cancel_initiated === true || Boolean(batch?.cancel_initiated_at);
  let status: NativeBatchState["status"] = "in_progress";
  if (processing === "canceling") status = "cancelling";
  else if (processing === "ended") {
    status = cancelInitiated ? "cancelled" : count(counts.expired) > 0 ? "expired" : "completed";
  }
  return {
    status,
    request_counts: { total, completed: succeeded, failed },
    details: { ...details, processing_status: processing, cancel_initiated: cancelInitiated || undefined },
  };
}

function detailsOf(state: NativeBatchState): AnthropicDetails {
  return (state.details ?? {}) as unknown as AnthropicDetails;
}

/** The request body `{requests: [...]}`, written as the lines are read (never held whole). */
function requestsBody(
  lines: AsyncIterable<BatchInputLine>,
  endpoint: BatchEndpoint,
  details: AnthropicDetails,
): { body: Readable } {
  let sent = 0;
  const renamed = new RenamedIds(
    details,
    "Too many custom_id values Anthropic does not accept (it takes 1-64 of [a-zA-Z0-9_-]); rename them or run the batch in the gateway (x-gateway-batch-mode: gateway).",
  );
  async function* chunks(): AsyncGenerator<string> {
    yield '{"requests":[';
    for await (const line of lines) {
      let params: Record<string, unknown>;
      try {
        params = paramsOf(line, endpoint);
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        details.refused ??= [];
        noteRefused(
          details.refused,
          { custom_id: line.custom_id, code: error.code ?? "invalid_request", message: error.message },
          "Anthropic",
        );
        continue;
      }
      let customId = line.custom_id;
      if (!ANTHROPIC_CUSTOM_ID.test(customId) || customId.startsWith(RENAMED_PREFIX)) {
        customId = `${RENAMED_PREFIX}${line.line}`;
        renamed.add(customId, line.custom_id);
      }
      yield `${sent === 0 ? "" : ","}${JSON.stringify({ custom_id: customId, params })}`;
      sent++;
    }
    yield "]}";
  }
  return { body: Readable.from(chunks()) };
}

/** One result of the provider's JSONL as an OpenAI output line. */
function resultLine(
  providerBatchId: string,
  item: any,
  details: AnthropicDetails,
  now: number,
): BatchResultLine | undefined {
  const sentId = typeof item?.custom_id === "string" ? item.custom_id : undefined;
  if (!sentId) return undefined;
  const customId = details.renamed?.[sentId] ?? sentId;
  const result = item.result ?? {};
  const id = resultLineId(providerBatchId, customId);
  switch (result.type) {
    case "succeeded": {
      const message = result.message ?? {};
      const body =
        details.endpoint === "/v1/chat/completions"
          ? fromAnthropicMessage(message, { now, model: String(message.model ?? ""), requestId: String(message.id) })
          : message;
      return {
        id,
        custom_id: customId,
        response: { status_code: 200, request_id: String(message.id ?? id), body },
        error: null,
      };
    }
    case "errored": {
      // `{type: "error", error: {type, message}}`, the Messages API's error body.
      const inner = result.error?.error ?? result.error ?? {};
      const type = typeof inner.type === "string" ? inner.type : "api_error";
      const status = anthropicErrorStatus(type);
      return {
        id,
        custom_id: customId,
        response: {
          status_code: status,
          request_id: String(result.error?.request_id ?? id),
          body: { error: { message: String(inner.message ?? type), type, param: null, code: type } },
        },
        error: null,
      };
    }
    case "canceled":
      return errorLine(
        providerBatchId,
        customId,
        "batch_cancelled",
        "The batch was cancelled before this request ran.",
      );
    case "expired":
      return errorLine(
        providerBatchId,
        customId,
        "batch_expired",
        "This request could not be executed before the completion window expired.",
      );
    default:
      return errorLine(providerBatchId, customId, "unknown_result", `Anthropic answered result type '${result.type}'.`);
  }
}

export const anthropicBatches: NativeBatchApi = {
  supports(target, endpoint) {
    return target.provider === "anthropic" && SUPPORTED.has(endpoint);
  },

  async submit(submission, ctx) {
    const details: AnthropicDetails = { endpoint: submission.endpoint };
    const { body } = requestsBody(submission.lines(), submission.endpoint, details);
    const batch = await callProviderJson(
      { url: batchUrl(ctx), method: "POST", headers: { ...headersOf(ctx), "content-type": "application/json" }, body },
      ctx,
    );
    if (typeof batch?.id !== "string") {
      throw new UpstreamError(502, "Anthropic answered a batch without an id.", { type: "server_error" });
    }
    return { providerBatchId: batch.id, state: stateOf(batch, details) };
  },

  async poll(providerBatchId, previous, ctx) {
    const batch = await callProviderJson(
      { url: batchUrl(ctx, `/${encodeURIComponent(providerBatchId)}`), method: "GET", headers: headersOf(ctx) },
      ctx,
    );
    return stateOf(batch, detailsOf(previous));
  },

  async *results(providerBatchId, state, ctx) {
    const details = detailsOf(state);
    yield* refusedResults(providerBatchId, details.refused);
    const now = Math.floor(Date.now() / 1000);
    const url = batchUrl(ctx, `/${encodeURIComponent(providerBatchId)}/results`);
    for await (const item of providerJsonLines({ url, method: "GET", headers: headersOf(ctx) }, ctx)) {
      const line = resultLine(providerBatchId, item, details, now);
      if (line) yield line;
    }
  },

  async cancel(providerBatchId, _state, ctx) {
    const url = batchUrl(ctx, `/${encodeURIComponent(providerBatchId)}/cancel`);
    await callProviderJson({ url, method: "POST", headers: headersOf(ctx) }, ctx);
  },
};
