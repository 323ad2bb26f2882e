import type { Principal } from "../auth/principal.ts";
import type { InferenceOutcome } from "../inference/gateway/outcome.ts";
import type { Services } from "../services.ts";
import type { GatewayRequestHeaders } from "./gateway-headers.ts";

/** Everything a handler may use besides the Request itself. */
export interface RequestContext {
  /** Taken from `x-gateway-trace-id` (or its `x-portkey-` alias) or generated. */
  traceId: string;
  /** The request path (set by the app; read it instead of parsing `request.url` again). */
  path?: string;
  /** Path parameters of the matched route. */
  params: Record<string, string>;
  /** Set on routes that require authentication. */
  principal?: Principal;
  /**
   * The gateway request headers (spec 5.3), parsed once: set by the app on authenticated routes; use
   * `gatewayHeadersOf(request, ctx)` (core/inference/gateway/plan.ts) where it may be missing (unit tests).
   */
  gateway?: GatewayRequestHeaders;
  services: Services;
  /** Aborted when the client goes away or the platform ends the request. */
  signal: AbortSignal;
  /** Work that must finish before the platform freezes (Lambda) but after the response is sent. */
  waitUntil(work: Promise<unknown>): void;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** Set by inference routes: provider, usage, cost and timings, for logs and limits. */
  outcome?: InferenceOutcome;
}

export type Handler = (request: Request, ctx: RequestContext) => Promise<Response>;

/** A family module's handlers by the names the route table uses. */
export type HandlerMap = Record<string, Handler>;

/** What a platform passes with each request. */
export interface PlatformContext {
  waitUntil(work: Promise<unknown>): void;
  signal?: AbortSignal;
  /**
   * The request's path as received (no query string, not decoded), when the platform has it without parsing
   * the URL: routes without parameters are then found without the router.
   */
  path?: string;
}
