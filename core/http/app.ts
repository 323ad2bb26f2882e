import { Hono } from "hono";
import type { RouteFamily, RouteSpec } from "./route-types.ts";
import type { Services, RequestContext } from "../services.ts";
import { ConditionFailedError, StoreUnavailableError } from "../store/ports.ts";
import { authenticate } from "../auth/authenticate.ts";
import { requireScope } from "../auth/scopes.ts";
import { DomainError } from "../control/errors.ts";
import { logRequest } from "../observe/logs/log-request.ts";
import type { Handler, HandlerMap, PlatformContext } from "./context.ts";
import { httpErrorOf } from "./domain-errors.ts";
import { HttpError, RouteNotMatched, errorResponse, serviceUnavailable } from "./errors.ts";
import { TRACE_ID_HEADER, parseGatewayHeaders, traceIdOf } from "./gateway-headers.ts";
import { withHeaders } from "./response-headers.ts";
import { CORS_ANSWER_HEADERS, corsPreflight } from "./cors.ts";

export type FetchHandler = (request: Request, platform: PlatformContext) => Promise<Response>;

export interface AppOptions {
  families: RouteFamily[];
  /** Handler modules by family name. */
  handlers: Record<string, HandlerMap>;
  services: Services;
}

type Env = { Bindings: { platform: PlatformContext } };

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * Builds the fetch-style app for some route families: routing (Hono), trace ids, authentication, and one
 * place where every error becomes an OpenAI-shaped response. Both platforms serve exactly this function.
 */
export function createApp({ families, handlers, services }: AppOptions): FetchHandler {
  const app = new Hono<Env>();
  const routes: RouteSpec[] = [];

  const mounted = mountedRoutes(families, handlers);

  /** Serves one route: trace id, authentication, the handler, errors in OpenAI's shape, the request's log. */
  const serveRoute =
    (route: RouteSpec, handler: Handler) =>
    async (request: Request, platform: PlatformContext, path: string, params: Record<string, string>) => {
      const headers = request.headers;
      const ctx: RequestContext = {
        traceId: traceIdOf(headers),
        path,
        params,
        services,
        signal: platform.signal ?? request.signal,
        waitUntil: platform.waitUntil,
        startedAt: performance.now(),
      };
      let response: Response;
      try {
        if (route.auth === "api_key") {
          ctx.principal = await authenticate(headers, services, request);
          if (route.scope) requireScope(ctx.principal, route.scope, route.organisationScope);
          ctx.gateway = parseGatewayHeaders(headers, ctx.traceId);
        }
        response = await handler(request, ctx);
      } catch (error) {
        if (error instanceof RouteNotMatched) return unmatched(request, false);
        response = errorResponse(toHttpError(error, ctx.traceId, ctx.signal));
      }
      response = withTraceId(response, ctx.traceId);
      if (route.cors) response = withHeaders(response, CORS_ANSWER_HEADERS);
      // One log record per authenticated request, written after the response (core/observe/logs).
      if (ctx.principal) ctx.waitUntil(logRequest(request, response, route, ctx));
      return response;
    };

  // Routes without parameters are found by one map lookup when the platform gives the path (the local server
  // and Lambda do): Hono's router, context and middleware chain cost ~10 µs and ~4 KB of garbage per request.
  // Hono runs the first registered route that matches, so a route goes in the map only if no route registered
  // before it (same method) matches its path too: then both ways answer alike, whatever the table's order.
  const exact = new Map<string, ReturnType<typeof serveRoute>>();
  const earlier: Array<{ method: string; pattern: RegExp }> = [];
  for (const { route, handler } of mounted) {
    routes.push(route);
    const serve = serveRoute(route, handler);
    const shadowed = earlier.some((other) => other.method === route.method && other.pattern.test(route.path));
    if (!/[:*]/.test(route.path) && !shadowed) exact.set(`${route.method} ${route.path}`, serve);
    earlier.push({ method: route.method, pattern: pathPattern(route.path) });
    app.on(route.method, route.path, (c) =>
      serve(c.req.raw, c.env.platform, c.req.path, c.req.param() as Record<string, string>),
    );
  }

  const unmatched = unmatchedAnswer(routes);

  app.notFound((c) => unmatched(c.req.raw, true));

  return (request, platform) => {
    const serve = platform.path === undefined ? undefined : exact.get(`${request.method} ${platform.path}`);
    // serveRoute answers its own errors; this only catches a fault outside it, as Hono's error handler did,
    // in OpenAI's shape and without the fault's message.
    if (serve) {
      return serve(request, platform, platform.path!, NO_PARAMS).catch((error: unknown) =>
        errorResponse(toHttpError(error, traceIdOf(request.headers))),
      );
    }
    return Promise.resolve(app.fetch(request, { platform }));
  };
}

/**
 * Maps anything thrown to a client-safe error. Unknown errors are logged here, never sent with a stack. A client
 * that went away (its signal aborted, or its upload cut: Node's "aborted") is no fault of the gateway: one
 * line, status 499 for the request's log.
 */
export function toHttpError(error: unknown, traceId: string, signal?: AbortSignal): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) return httpErrorOf(error);
  if (signal?.aborted || isClientAbort(error)) {
    console.warn(`[${traceId}] client closed the request`);
    return new HttpError(499, "The client closed the request.", { code: "client_closed_request" });
  }
  if (error instanceof StoreUnavailableError) {
    console.error(`[${traceId}] store unavailable: ${error.message}`);
    return serviceUnavailable("The gateway's storage is temporarily unavailable; retry shortly.");
  }
  if (error instanceof ConditionFailedError) {
    return new HttpError(409, "The resource was changed concurrently; retry the request.", { code: "conflict" });
  }
  console.error(`[${traceId}] unhandled error`, error);
  return new HttpError(500, `Internal server error (trace id ${traceId}).`, { code: "internal_error" });
}

/** What Node's HTTP server throws to a reader of a request body the client stopped sending. */
function isClientAbort(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && error.message === "aborted" && (code === "ECONNRESET" || code === undefined);
}

function withTraceId(response: Response, traceId: string): Response {
  return withHeaders(response, { [TRACE_ID_HEADER]: traceId });
}

function pathPattern(path: string): RegExp {
  const source = path
    .split("/")
    .map((segment) => {
      if (segment === "*") return ".*";
      if (segment.startsWith(":")) return "[^/]+";
      return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    })
    .join("/");
  return new RegExp(`^${source}/?$`);
}

/** Every family's routes with their handlers; catch-all routes last (Hono runs matches in registration order). */
function mountedRoutes(
  families: RouteFamily[],
  handlers: AppOptions["handlers"],
): Array<{ route: RouteSpec; handler: Handler }> {
  const mounted: Array<{ route: RouteSpec; handler: Handler }> = [];
  for (const family of families) {
    const familyHandlers = handlers[family.name];
    if (!familyHandlers) throw new Error(`no handler module for route family '${family.name}'`);
    for (const route of family.routes) {
      const handler = familyHandlers[route.handler];
      if (!handler) throw new Error(`family '${family.name}' has no handler '${route.handler}'`);
      mounted.push({ route, handler });
    }
  }
  // Hono runs matching routes in registration order: catch-all routes go last, so every dedicated route wins.
  mounted.sort((a, b) => Number(a.route.catchAll === true) - Number(b.route.catchAll === true));
  return mounted;
}

/** The answer to a request no route matched, for these routes. */
function unmatchedAnswer(routes: RouteSpec[]): (request: Request, includeCatchAll: boolean) => Response {
  const patterns = routes.map((route) => ({
    method: route.method,
    pattern: pathPattern(route.path),
    catchAll: route.catchAll === true,
    cors: route.cors === true,
  }));

  /**
   * 405 with Allow when another method matches the path, else 404 `unknown_url` (OpenAI's shape); a CORS
   * preflight of a `cors` route's path is answered.
   */
  return (request: Request, includeCatchAll: boolean): Response => {
    const path = new URL(request.url).pathname;
    // A browser's CORS preflight, for the routes that accept calls from other origins.
    if (request.method === "OPTIONS") {
      const methods = patterns.filter((route) => route.cors && route.pattern.test(path)).map((route) => route.method);
      if (methods.length > 0) return corsPreflight(methods);
    }
    const allowed = patterns
      .filter(
        (route) => (includeCatchAll || !route.catchAll) && route.method !== request.method && route.pattern.test(path),
      )
      .map((route) => route.method);
    const traceId = traceIdOf(request.headers);
    if (allowed.length > 0) {
      const error = new HttpError(405, `Method ${request.method} is not allowed on ${path}.`, {
        code: "method_not_allowed",
      });
      return withTraceId(errorResponse(error, { allow: [...new Set(allowed)].join(", ") }), traceId);
    }
    const error = new HttpError(404, `Invalid URL (${request.method} ${path})`, {
      type: "invalid_request_error",
      code: "unknown_url",
    });
    return withTraceId(errorResponse(error), traceId);
  };
}
