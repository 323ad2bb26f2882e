import type { RequestContext } from "../../services.ts";
import { withinJsonDepth } from "../../util/json-depth.ts";
import { readBounded } from "../../util/read-bounded.ts";
import { withHeaders } from "../../http/response-headers.ts";
import { HttpError, RouteNotMatched } from "../../http/errors.ts";
import { mapUpstreamError } from "../../providers/errors.ts";
import { loadProvider } from "../../providers/registry.ts";
import { type UpstreamRequest, UpstreamError, type ProviderTarget } from "../../providers/types.ts";
import { joinUrl } from "../../providers/url.ts";
import type { LeafNode } from "../routing/config.ts";
import { RoutingFailure, runStrategy } from "../routing/engine.ts";
import { applyParams, hasParamRules } from "../routing/params.ts";
import { isPlainObject } from "../routing/query.ts";
import { noProviderSelected, resolveRouting } from "../routing/source.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
import { cachedPassthrough } from "../cache/passthrough-cache.ts";
import { InferenceGuardrails } from "../guardrails/pipeline.ts";
import { passthroughRouteOf } from "../guardrails/passthrough-route.ts";
import { type InferenceOutcome, newOutcome } from "./outcome.ts";
import { applyModelRules } from "./model-rules.ts";
import { MAX_MODEL_LENGTH } from "./schemas/limits.ts";
import {
  LeafResolver,
  type ResolvedLeaf,
  failureHeaders,
  gatewayHeadersOf,
  recordedAttempt,
  recordFailure,
  routingHeaders,
  upstreamToHttp,
} from "./plan.ts";
import { requestUpstream } from "../../providers/upstream/client.ts";
import { redirectError } from "../../providers/upstream/failures.ts";
import { relayRawAnswer, relayedHeaders } from "./raw-answer.ts";
import { answerKeyOf } from "./answer-key.ts";

/**
 * Generic pass-through (spec 4.7): `METHOD /v1/{provider-endpoint}` (what no dedicated route handles) and
 * `/v1/proxy/{provider-endpoint}` (always raw) forward the path, query, body and headers to the provider's
 * base URL with the provider's auth, and return the provider's answer unchanged (status, headers, body,
 * streams). Configs apply as on chat: fallback, loadbalance, conditional (params = the JSON body), retries,
 * timeouts, and override/default/drop params on JSON bodies. A JSON body shaped like chat completions
 * (`messages`) or completions (`prompt`) runs the config's input guardrails as those routes do (a denial
 * answers instead, a redaction is what is forwarded); the raw answer runs no output guardrails.
 *
 * Fallbacks need a failure before any byte reached the client, so a 2xx is answered only once its first body
 * chunk arrived (an upstream that fails before that moves the fallback on); after that, the gap between chunks
 * is bounded by the timeout and a failure cuts the stream (raw bytes cannot carry an error event).
 * The final failure is answered as the provider sent it (raw); gateway-side failures (timeout, unreachable)
 * in OpenAI's error shape.
 */
export async function handlePassthrough(request: Request, ctx: RequestContext, forced: boolean): Promise<Response> {
  const gateway = gatewayHeadersOf(request, ctx);
  const config = await resolveRouting(gateway, ctx);
  if (!config) {
    if (!forced) throw new RouteNotMatched();
    throw noProviderSelected();
  }
  const pass = await readPassthrough(request, ctx, gateway.sensitiveHeaders, forced);
  const { url, jsonBody, outcome } = pass;
  const resolver = new LeafResolver(request, gateway, ctx);
  const guardedRoute = passthroughRouteOf(jsonBody());
  const guardrails = guardedRoute
    ? new InferenceGuardrails(guardedRoute, request, ctx, outcome, `chatcmpl-${answerKeyOf(ctx)}`)
    : undefined;
  let provider: string | undefined;

  try {
    const result = await runStrategy(config, {
      signal: ctx.signal,
      queryContext: () => ({
        metadata: gateway.metadata ?? {},
        params: jsonBody() ?? {},
        url: { pathname: url.pathname },
      }),
      async call(leaf, retry) {
        const resolved = await resolver.resolve(leaf);
        provider = resolved.target.provider;
        await ctx.services.policies?.admitRequest(ctx, provider);
        return callLeaf(pass, leaf, resolved, retry, guardrails);
      },
    });
    outcome.retries = result.retries;
    outcome.lastUsedOptionIndex = result.leaf.path;
    return withHeaders(result.response, {
      ...routingHeaders(result.leaf.path, result.retries, provider, outcome.cacheStatus),
      ...ctx.services.policies?.headersFor(ctx),
    });
  } catch (error) {
    recordFailure(outcome, error);
    return rawFailureAnswer(error, provider);
  }
}

/** The request as every leaf forwards it: the provider's path, the body (read once), the forwarded headers. */
async function readPassthrough(
  request: Request,
  ctx: RequestContext,
  sensitiveHeaders: string[],
  forced: boolean,
): Promise<Passthrough> {
  const url = new URL(request.url);
  const providerPath = url.pathname.slice(forced ? "/v1/proxy".length : "/v1".length) || "/";
  const method = request.method as UpstreamRequest["method"];
  const bytes =
    request.body && method !== "GET"
      ? await readBytes(request, ctx.services.settings.GATEWAY_MAX_UPLOAD_BYTES)
      : undefined;
  let json: Record<string, unknown> | null | undefined;
  const jsonBody = () => {
    if (json === undefined)
      json = bytes && isJsonContent(request.headers.get("content-type")) ? parseObject(bytes) : null;
    return json;
  };
  const forwarded = forwardableHeaders(request.headers, sensitiveHeaders);
  // The model is only recorded (the body is forwarded as it is): bounded like the schemas' model names.
  // Only a string: String() of an object calls its own toString, which a body can make anything.
  const requested = jsonBody()?.model;
  const model = typeof requested === "string" ? requested.slice(0, MAX_MODEL_LENGTH) : "";
  const outcome = newOutcome("passthrough", model, jsonBody()?.stream === true);
  ctx.outcome = outcome;
  return { ctx, url, providerPath, method, bytes, jsonBody, forwarded, outcome };
}

/**
 * One leaf's attempt: the input guardrails on a chat- or completions-shaped body (pipeline step 4: a denial is
 * the answer, a redaction is what is sent), then the cache (step 5) in front of the provider.
 */
async function callLeaf(
  pass: Passthrough,
  leaf: LeafNode,
  resolved: ResolvedLeaf,
  retry: number,
  guardrails: InferenceGuardrails | undefined,
): Promise<Response> {
  const { ctx, url, providerPath, method, bytes, jsonBody, forwarded, outcome } = pass;
  let redacted: Record<string, unknown> | undefined;
  if (guardrails) {
    const body = jsonBody()!;
    const sent = hasParamRules(leaf.settings) ? applyParams(body, leaf.settings) : body;
    const guarded = await guardrails.input(leaf.settings, sent);
    if (guarded.answer) return guarded.answer;
    if (guarded.body !== sent) redacted = guarded.body;
  }
  // The JSON body as forwarded when the gateway rewrites it (a redaction, param rules); else the bytes go.
  const rewritten =
    redacted ?? (hasParamRules(leaf.settings) && jsonBody() ? applyParams(jsonBody()!, leaf.settings) : undefined);
  const sentModel = (rewritten ?? jsonBody())?.model;
  const provider = resolved.target.provider;
  // The same cache as inference, keyed by method, path, query, body and forwarded headers. A body naming its
  // model meets the saved integration's model rules first, as on chat.
  return recordedAttempt(outcome, { path: leaf.path, provider, retry }, () => {
    const target = typeof sentModel === "string" ? applyModelRules(resolved.target, sentModel) : resolved.target;
    return cachedPassthrough(
      {
        ctx,
        settings: leaf.settings.cache,
        target,
        method,
        path: providerPath + url.search,
        json: redacted ?? jsonBody(),
        bytes,
        headers: forwarded,
        outcome,
      },
      () => forwardToProvider(pass, target, resolved.timeoutMs, rewritten),
    );
  });
}

/** One pass-through request, as each leaf of its config forwards it. */
interface Passthrough {
  ctx: RequestContext;
  url: URL;
  /** The provider's path (after `/v1` or `/v1/proxy`). */
  providerPath: string;
  method: UpstreamRequest["method"];
  bytes: Uint8Array | undefined;
  /** The body as a JSON object, when it is one (parsed once). */
  jsonBody(): Record<string, unknown> | null;
  forwarded: Record<string, string>;
  outcome: InferenceOutcome & { finish(): void };
}

/**
 * A leaf's call to `target` (the model rules applied): the provider's pass-through endpoint (its base URL, auth and
 * signing) with the body as it came, or as the gateway rewrote it (`rewritten`: redacted, params applied); the
 * answer relayed raw.
 */
async function forwardToProvider(
  pass: Passthrough,
  target: ProviderTarget,
  timeoutMs: number,
  rewritten: Record<string, unknown> | undefined,
): Promise<Response> {
  const { ctx, url, providerPath, method, bytes, forwarded, outcome } = pass;
  const adapter = (await loadProvider(target.provider))!;
  // Logged on failures too: the provider that answered last, or failed last.
  outcome.provider = adapter.id;
  if (!adapter.passthrough) {
    throw new UpstreamError(400, `Provider '${adapter.id}' does not support pass-through yet.`, {
      code: "unsupported_route",
      param: "x-gateway-provider",
    });
  }
  const endpoint = await adapter.passthrough(target, {
    trustedHosts: ctx.services.trustedHosts,
    signal: ctx.signal,
    path: providerPath,
    search: url.search,
    headers: forwarded,
  });
  const unsigned: UpstreamRequest = {
    url: joinUrl(endpoint.baseUrl, endpoint.path ?? providerPath + url.search),
    method,
    headers: { ...forwarded, ...lowerCased(endpoint.headers) },
    body: rewritten ? JSON.stringify(rewritten) : bytes,
  };
  const upstreamRequest = endpoint.sign ? await endpoint.sign(unsigned) : unsigned;
  const response = await relay(upstreamRequest, timeoutMs, ctx.signal, ctx.services.trustedHosts, () => {
    outcome.totalMs = performance.now() - ctx.startedAt;
    outcome.finish();
  });
  outcome.status = response.status;
  outcome.upstreamFirstByteMs = performance.now() - ctx.startedAt;
  return response;
}

/**
 * The answer of a raw-forwarding route whose routing failed: the last provider's error as it came (status,
 * headers, body) with the gateway's routing headers; gateway-side failures (timeout, unreachable) in OpenAI's
 * error shape. Anything else is rethrown.
 */
export function rawFailureAnswer(error: unknown, provider: string | undefined): Response {
  if (!(error instanceof RoutingFailure)) throw error;
  const headers = failureHeaders(error, provider);
  if (error.error instanceof PassthroughUpstreamError) {
    const raw = error.error.raw;
    const rawHeaders = relayedHeaders(raw.headers);
    for (const [name, value] of Object.entries(headers)) rawHeaders.set(name, value);
    return new Response(raw.body.byteLength > 0 ? (raw.body as Uint8Array<ArrayBuffer>) : null, {
      status: raw.status,
      headers: rawHeaders,
    });
  }
  throw upstreamToHttp(error.error, headers);
}

/** A provider's non-2xx answer, kept whole so that the last one can be returned as it came. */
export class PassthroughUpstreamError extends UpstreamError {
  readonly raw: { status: number; headers: Headers; body: Uint8Array };
  constructor(status: number, headers: Headers, body: Uint8Array) {
    const mapped = mapUpstreamError(status, Buffer.from(body).toString("utf8"));
    super(status, mapped.message, { type: mapped.type, code: mapped.code, param: mapped.param, headers });
    this.raw = { status, headers, body };
  }
}

/** One upstream call; resolves with the client's response once the first body chunk (or the end) arrived. */
async function relay(
  request: UpstreamRequest,
  timeoutMs: number,
  clientSignal: AbortSignal,
  trusted: TrustedHosts,
  onEnd: () => void,
): Promise<Response> {
  const upstream = await requestUpstream(request, { timeoutMs, signal: clientSignal, trusted });
  const { status } = upstream;
  if (status >= 300 && status < 400 && status !== 304) {
    await upstream.discard();
    throw redirectError(upstream);
  }
  if (status >= 400) throw new PassthroughUpstreamError(status, upstream.headers, await upstream.bytes());
  return relayRawAnswer(upstream, { timeoutMs, headers: relayedHeaders(upstream.headers), onEnd });
}

/** Request headers that are not the client's to forward: hop-by-hop, framing, the gateway's own, credentials. */
const DROPPED_REQUEST_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "expect",
  "content-length",
  "accept-encoding",
  "authorization",
  "cookie",
  // Provider auth header names (Anthropic, Azure, Google): the target's credentials are the ones sent, and a key
  // the client put in one must not reach a provider beside them, nor one that authenticates otherwise (SigV4).
  "x-api-key",
  "api-key",
  "x-goog-api-key",
]);

/** The client's headers for the provider: all but the dropped ones, `x-gateway-*`/`x-portkey-*` and sensitive ones. */
export function forwardableHeaders(headers: Headers, sensitive: readonly string[]): Record<string, string> {
  const hidden = new Set(sensitive);
  const out: Record<string, string> = {};
  for (const [name, value] of headers) {
    if (
      DROPPED_REQUEST_HEADERS.has(name) ||
      hidden.has(name) ||
      name.startsWith("x-gateway-") ||
      name.startsWith("x-portkey-")
    )
      continue;
    out[name] = value;
  }
  return out;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) out[name.toLowerCase()] = value;
  return out;
}

function isJsonContent(contentType: string | null): boolean {
  return contentType !== null && /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
}

function parseObject(bytes: Uint8Array): Record<string, unknown> | null {
  try {
    const parsed = JSON.parse(Buffer.from(bytes).toString("utf8"));
    // Too deep for the conditions' comparisons: forwarded as it is, but not read.
    return isPlainObject(parsed) && withinJsonDepth(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** The request body as bytes, refusing (413) more than `limit` without buffering it whole first. */
async function readBytes(request: Request, limit: number): Promise<Uint8Array | undefined> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  const tooLarge = () =>
    new HttpError(413, `Request body is larger than the limit of ${limit} bytes.`, { code: "request_too_large" });
  if (declared > limit) throw tooLarge();
  const bytes = await readBounded(request.body!, limit, tooLarge);
  return bytes.byteLength === 0 ? undefined : bytes;
}
