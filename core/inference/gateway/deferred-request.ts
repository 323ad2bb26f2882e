import type { Principal } from "../../auth/principal.ts";
import type { RequestContext, Services } from "../../services.ts";
import { parseGatewayHeaders } from "../../http/gateway-headers.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { resolveRouting } from "../routing/source.ts";
import { LeafResolver, gatewayHeadersOf } from "./plan.ts";

/**
 * A request to run later, elsewhere (a batch's lines in a queue worker, a fine-tuning job's refresh): who sent it
 * and the headers that chose its routing (provider, config, credentials, custom host, metadata), sealed through the
 * Secrets port because they may carry provider keys. The gateway API key itself is never kept: the principal it
 * authenticated is.
 */
export interface DeferredRequest {
  principal: Principal;
  /** Secrets-sealed JSON of the kept headers. */
  sealedHeaders: string;
}

/** Headers never kept: the gateway credential, the body's framing, the transport's own. */
const NOT_KEPT = new Set([
  "x-gateway-api-key",
  "x-portkey-api-key",
  "cookie",
  "content-length",
  "content-type",
  "content-encoding",
  "transfer-encoding",
  "host",
  "connection",
  "keep-alive",
  "expect",
  "accept",
  "accept-encoding",
  "user-agent",
]);

export async function deferRequest(
  request: Request,
  principal: Principal,
  services: Services,
): Promise<DeferredRequest> {
  const kept: Record<string, string> = {};
  for (const [name, value] of request.headers) if (!NOT_KEPT.has(name)) kept[name] = value;
  return { principal, sealedHeaders: await services.stores.secrets.encrypt(JSON.stringify(kept)) };
}

export interface ReplayOptions {
  /** The gateway path the replayed request is for, e.g. `/v1/chat/completions`. */
  path: string;
  /** JSON body of the replayed request, if any. */
  body?: unknown;
  signal: AbortSignal;
  /** Trace id of the replayed request (default: a new one). */
  traceId?: string;
}

/**
 * A Request and RequestContext that run through the pipeline as the deferred request's sender would have: the
 * same principal and routing headers. Work the pipeline hands to `waitUntil` (logs) is collected: await
 * `settled()` before acknowledging the work.
 */
export async function replayRequest(
  deferred: DeferredRequest,
  services: Services,
  options: ReplayOptions,
): Promise<{ request: Request; ctx: RequestContext; settled(): Promise<void> }> {
  const headers = new Headers(JSON.parse(await services.stores.secrets.decrypt(deferred.sealedHeaders)));
  if (options.traceId) headers.set("x-gateway-trace-id", options.traceId);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  if (body !== undefined) headers.set("content-type", "application/json");
  const request = new Request(`http://gateway.internal${options.path}`, {
    method: body === undefined ? "GET" : "POST",
    headers,
    body,
  });
  const gateway = parseGatewayHeaders(request.headers, options.traceId);
  const pending: Promise<unknown>[] = [];
  const ctx: RequestContext = {
    traceId: gateway.traceId,
    path: options.path,
    params: {},
    principal: deferred.principal,
    gateway,
    services,
    signal: options.signal,
    waitUntil: (work) => {
      pending.push(work.catch((error) => console.error(`[${gateway.traceId}] deferred work failed`, error)));
    },
    startedAt: performance.now(),
  };
  return {
    request,
    ctx,
    async settled() {
      while (pending.length > 0) await Promise.all(pending.splice(0));
    },
  };
}

/**
 * The one provider target the request's routing names (x-gateway-provider with credentials, a saved provider, or a
 * config of a single target), credentials resolved; undefined when the routing has several targets (fallback,
 * loadbalance, conditional) or names none. What provider-native work (files, batches, fine-tuning) is sent to.
 */
export async function singleTargetOf(request: Request, ctx: RequestContext): Promise<ProviderTarget | undefined> {
  const gateway = gatewayHeadersOf(request, ctx);
  const config = await resolveRouting(gateway, ctx);
  if (config?.kind !== "leaf") return undefined;
  const resolved = await new LeafResolver(request, gateway, ctx).resolve(config);
  return resolved.target;
}
