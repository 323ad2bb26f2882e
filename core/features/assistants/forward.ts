import { resourceOwnerOf } from "../../auth/resource-owner.ts";
import { PassthroughUpstreamError, forwardableHeaders, rawFailureAnswer } from "../../inference/gateway/passthrough.ts";
import { type InferenceOutcome, newOutcome } from "../../inference/gateway/outcome.ts";
import {
  LeafResolver,
  type ResolvedLeaf,
  gatewayHeadersOf,
  recordedAttempt,
  recordFailure,
  routingHeaders,
} from "../../inference/gateway/plan.ts";
import { MAX_MODEL_LENGTH } from "../../inference/gateway/schemas/limits.ts";
import { requestUpstream } from "../../providers/upstream/client.ts";
import { redirectError } from "../../providers/upstream/failures.ts";
import { relayRawAnswer, relayedHeaders } from "../../inference/gateway/upstream/raw-answer.ts";
import type { RequestContext } from "../../services.ts";
import { HttpError, badRequest } from "../../http/errors.ts";
import { parseJsonWithinDepth, readText, validate } from "../../http/json.ts";
import { withHeaders } from "../../http/response-headers.ts";
import type { UpstreamRequest } from "../../providers/types.ts";
import { runStrategy } from "../../inference/routing/engine.ts";
import { isPlainObject } from "../../inference/routing/query.ts";
import { noProviderSelected, resolveRouting } from "../../inference/routing/source.ts";
import { settleJsonAnswer } from "./answers.ts";
import { assistantsEndpoint } from "./endpoint.ts";
import { assistantObjectOwnersOf } from "./object-owners.ts";
import type { AssistantsOperation } from "./operations.ts";
import { refuseOthersObjects } from "./references.ts";
import { RunEventsObserver } from "./run-events.ts";
import type { CallScope } from "./run-usage.ts";

/**
 * One call of OpenAI's Assistants API v2 (`/v1/assistants`, `/v1/threads...`, `/v1/vector_stores...`), forwarded
 * to OpenAI or Azure OpenAI through the routing layer as pass-through is (configs, retries, timeouts, fallback
 * before any byte reached the client), with `OpenAI-Beta: assistants=v2`. The body is checked lightly and sent
 * as it came. Around the call:
 * - workspace isolation: any object the path or body names that another workspace created through the gateway is
 *   answered 404 before anything is sent; created objects are recorded, deleted ones forgotten, account-wide
 *   lists filtered (core/features/assistants/answers.ts);
 * - a finished run's usage and cost go on the outcome once per run, from a JSON answer or a streamed run's
 *   terminal event (the stream relayed as it arrives);
 * - the call is logged like other inference (`route: "passthrough"`).
 * The provider's error answers come back as they were sent (status, headers, body), as pass-through does.
 */
export async function handleAssistantsCall(
  request: Request,
  ctx: RequestContext,
  operation: AssistantsOperation,
): Promise<Response> {
  const gateway = gatewayHeadersOf(request, ctx);
  const url = new URL(request.url);
  const method = request.method as UpstreamRequest["method"];
  const { text, json } = await readOperationBody(request, ctx, operation);
  const owner = resourceOwnerOf(ctx.principal!);
  const owners = assistantObjectOwnersOf(ctx.services);
  await refuseOthersObjects(owners, owner, ctx.params, json);

  const requested = json?.model;
  const model = typeof requested === "string" ? requested.slice(0, MAX_MODEL_LENGTH) : "";
  const outcome = newOutcome("passthrough", model, json?.stream === true);
  ctx.outcome = outcome;
  if (json) outcome.requestBody = json;
  if (text) outcome.requestChars = text.length;

  const config = await resolveRouting(gateway, ctx);
  if (!config) {
    const error = noProviderSelected();
    recordFailure(outcome, error);
    throw error;
  }
  const providerPath = (ctx.path ?? url.pathname).slice("/v1".length);
  const forwarded = forwardableHeaders(request.headers, gateway.sensitiveHeaders);
  const resolver = new LeafResolver(request, gateway, ctx);
  let provider: string | undefined;
  let observer: RunEventsObserver | undefined;
  const scope = (answeredBy: string): CallScope => ({ owners, owner, outcome, provider: answeredBy });
  const call: AssistantsCall = { ctx, method, text, providerPath, search: url.search, forwarded, scope };

  try {
    const result = await runStrategy(config, {
      signal: ctx.signal,
      queryContext: () => ({ metadata: gateway.metadata ?? {}, params: json ?? {}, url: { pathname: url.pathname } }),
      async call(leaf, retry) {
        const resolved = await resolver.resolve(leaf);
        provider = resolved.target.provider;
        await ctx.services.policies?.admitRequest(ctx, provider);
        return recordedAttempt(outcome, { path: leaf.path, provider, retry }, () =>
          forwardToTarget(call, resolved, provider!, (watcher) => {
            observer = watcher;
          }),
        );
      },
    });
    outcome.retries = result.retries;
    outcome.lastUsedOptionIndex = result.leaf.path;
    const answerHeaders = {
      ...routingHeaders(result.leaf.path, result.retries, provider),
      ...ctx.services.policies?.headersFor(ctx),
    };
    if (observer) return withHeaders(result.response, answerHeaders);
    const response = await settledJson(result.response, operation, scope(provider!));
    outcome.totalMs = performance.now() - ctx.startedAt;
    outcome.finish();
    return withHeaders(response, answerHeaders);
  } catch (error) {
    recordFailure(outcome, error);
    return rawFailureAnswer(error, provider);
  }
}

/** One Assistants call as every attempt forwards it. */
interface AssistantsCall {
  ctx: RequestContext;
  method: UpstreamRequest["method"];
  /** The body as it came (sent unchanged). */
  text: string;
  providerPath: string;
  search: string;
  forwarded: Record<string, string>;
  scope(answeredBy: string): CallScope;
}

/**
 * One attempt at a target: the call forwarded with `OpenAI-Beta: assistants=v2`; an error answer kept raw for
 * the client, a stream relayed as it arrives and watched (`watch`) for the run's usage, a JSON answer read whole.
 */
async function forwardToTarget(
  call: AssistantsCall,
  resolved: ResolvedLeaf,
  provider: string,
  watch: (observer: RunEventsObserver) => void,
): Promise<Response> {
  const { ctx, method, text, providerPath, forwarded, scope } = call;
  const outcome = ctx.outcome! as InferenceOutcome & { finish(): void };
  const endpoint = await assistantsEndpoint(resolved.target, providerPath, call.search, {
    trustedHosts: ctx.services.trustedHosts,
    signal: ctx.signal,
  });
  const upstreamRequest: UpstreamRequest = {
    url: endpoint.url,
    method,
    headers: { "openai-beta": "assistants=v2", ...forwarded, ...lowerCased(endpoint.headers) },
    body: text || undefined,
  };
  const upstream = await requestUpstream(upstreamRequest, {
    timeoutMs: resolved.timeoutMs,
    signal: ctx.signal,
    trusted: ctx.services.trustedHosts,
  });
  const { status } = upstream;
  if (status >= 300 && status < 400 && status !== 304) {
    await upstream.discard();
    throw redirectError(upstream);
  }
  if (status >= 400) throw new PassthroughUpstreamError(status, upstream.headers, await upstream.bytes());
  outcome.provider = provider;
  outcome.status = status;
  const headers = relayedHeaders(upstream.headers);
  if (isEventStream(headers)) {
    const watcher = new RunEventsObserver(scope(provider));
    const response = await relayRawAnswer(upstream, {
      timeoutMs: resolved.timeoutMs,
      headers,
      onChunk: (chunk) => watcher.push(chunk),
      onEnd: () => {
        void watcher.settled().then(() => {
          outcome.totalMs = performance.now() - ctx.startedAt;
          outcome.finish();
        });
      },
    });
    watch(watcher);
    outcome.upstreamFirstByteMs = performance.now() - ctx.startedAt;
    return response;
  }
  const bytes = await upstream.bytes();
  outcome.upstreamFirstByteMs = performance.now() - ctx.startedAt;
  return new Response(bytes.byteLength > 0 ? (bytes as Uint8Array<ArrayBuffer>) : null, { status, headers });
}

/**
 * The request body: for operations with a schema, JSON (an empty body is `{}`) that must be an object passing
 * the schema (400 naming the param); otherwise whatever came, unread. Either way the text is forwarded as it is.
 */
async function readOperationBody(
  request: Request,
  ctx: RequestContext,
  operation: AssistantsOperation,
): Promise<{ text: string; json: Record<string, unknown> | undefined }> {
  if (request.method === "GET" || request.method === "DELETE" || !request.body) return { text: "", json: undefined };
  const text = await readText(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  if (!operation.body) return { text, json: undefined };
  const contentType = request.headers.get("content-type");
  if (text.trim() !== "" && contentType && !/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) {
    throw new HttpError(415, `Unsupported content type '${contentType}'; send application/json.`, {
      code: "unsupported_media_type",
    });
  }
  const parsed = text.trim() === "" ? {} : parseJsonWithinDepth(text, null, "The request body");
  if (!isPlainObject(parsed)) throw badRequest("The request body must be a JSON object.", null, "invalid_value");
  validate(operation.body, parsed);
  return { text, json: parsed };
}

/** A buffered 2xx JSON answer after the gateway's bookkeeping (re-serialised only when a list was filtered). */
async function settledJson(response: Response, operation: AssistantsOperation, scope: CallScope): Promise<Response> {
  const bytes = new Uint8Array(await response.arrayBuffer());
  const { headers, status } = response;
  const outcome = scope.outcome;
  outcome.responseChars = bytes.byteLength;
  let answer: unknown;
  try {
    answer = headers.get("content-encoding") ? undefined : JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    answer = undefined;
  }
  if (answer === undefined) return new Response(bytes.byteLength > 0 ? bytes : null, { status, headers });
  const settled = await settleJsonAnswer(operation, answer, scope);
  outcome.responseBody = settled.answer;
  if (!settled.changed) return new Response(bytes, { status, headers });
  const text = JSON.stringify(settled.answer);
  headers.delete("content-length");
  outcome.responseChars = text.length;
  return new Response(text, { status, headers });
}

function isEventStream(headers: Headers): boolean {
  return /^text\/event-stream\b/i.test(headers.get("content-type") ?? "");
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}
