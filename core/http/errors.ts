/**
 * Errors in the OpenAI error shape: {"error": {"message", "type", "param", "code"}}.
 * Handlers throw HttpError; the app turns any thrown value into such a response (never a stack trace).
 */

export interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export class HttpError extends Error {
  readonly status: number;
  readonly type: string;
  readonly param: string | null;
  readonly code: string | null;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    message: string,
    options: { type?: string; param?: string | null; code?: string | null; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.type = options.type ?? defaultType(status);
    this.param = options.param ?? null;
    this.code = options.code ?? null;
    this.headers = options.headers ?? {};
  }

  body(): ErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

function defaultType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 409) return "conflict_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

export const badRequest = (message: string, param: string | null = null, code: string | null = null) =>
  new HttpError(400, message, { param, code });

export const notFound = (message: string, code = "not_found") => new HttpError(404, message, { code });

export const unauthorized = (message: string) => new HttpError(401, message, { code: "invalid_api_key" });

export const forbidden = (message: string, code = "forbidden") => new HttpError(403, message, { code });

export const conflict = (message: string, param: string | null = null) =>
  new HttpError(409, message, { param, code: "conflict" });

export const serviceUnavailable = (message: string) =>
  new HttpError(503, message, { code: "service_unavailable", headers: { "retry-after": "1" } });

export function errorResponse(error: HttpError, extraHeaders?: Record<string, string>): Response {
  return new Response(JSON.stringify(error.body()), {
    status: error.status,
    headers: { "content-type": "application/json", ...error.headers, ...extraHeaders },
  });
}

/**
 * Thrown by a catch-all route's handler (RouteSpec.catchAll) when the request is not for it after all: the
 * app then answers as if no route had matched (404 `unknown_url`, or 405 where another method would match).
 */
export class RouteNotMatched extends Error {
  constructor() {
    super("no route matched");
    this.name = "RouteNotMatched";
  }
}

/** The code of an upstream answer larger than the gateway buffers (core/util/read-bounded.ts). */
export const UPSTREAM_TOO_LARGE = "upstream_response_too_large";

/**
 * An upstream answer (an MCP server's, an agent's, a JWKS, a token endpoint's...) over the bytes the gateway
 * buffers for it: 502, and nothing past the limit was read. `what` names the upstream, `setting` the variable
 * that sets the limit, when one does.
 */
export const upstreamTooLarge = (what: string, limit: number, setting?: string) =>
  new HttpError(502, `${what} is larger than the limit of ${limit} bytes${setting ? ` (${setting})` : ""}.`, {
    code: UPSTREAM_TOO_LARGE,
  });

/** The size refusal `error` is or was caused by (SDK clients wrap what their fetch threw), if any. */
export function upstreamTooLargeIn(error: unknown): HttpError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof HttpError && current.code === UPSTREAM_TOO_LARGE) return current;
    current = current.cause;
  }
  return undefined;
}
