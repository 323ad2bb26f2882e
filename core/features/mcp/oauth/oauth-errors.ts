import { HttpError } from "../../../http/errors.ts";

/**
 * Errors of the OAuth endpoints (register, token, introspect, revoke) in the shape RFC 6749 section 5.2 and
 * RFC 7591 section 3.2.2 define: `{"error": <code>, "error_description": <text>}`. The gateway's own error fields
 * (`message`, `type`, `param`, `code`) ride along at the top level, where they do not clash with OAuth's.
 */

export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "invalid_target"
  | "temporarily_unavailable"
  | "server_error";

export class OAuthError extends Error {
  readonly status: number;
  readonly error: OAuthErrorCode;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(
    error: OAuthErrorCode,
    description: string,
    options: { status?: number; param?: string; headers?: Record<string, string> } = {},
  ) {
    super(description);
    this.error = error;
    this.status = options.status ?? (error === "invalid_client" ? 401 : 400);
    this.param = options.param ?? null;
    this.headers = options.headers ?? {};
  }
}

/** OAuth endpoints' answers are never cached (RFC 6749 section 5.1). */
export const NO_STORE = { "cache-control": "no-store", pragma: "no-cache" } as const;

export function oauthJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json", ...NO_STORE, ...headers },
  });
}

/** An OAuth error, or a gateway HttpError (bad body, too large...) translated to OAuth's shape. */
export function oauthErrorResponse(error: OAuthError | HttpError): Response {
  if (error instanceof OAuthError) {
    return oauthJson(
      {
        error: error.error,
        error_description: error.message,
        message: error.message,
        type: error.status === 401 ? "authentication_error" : "invalid_request_error",
        param: error.param,
        code: error.error,
      },
      error.status,
      error.headers,
    );
  }
  const code = error.status === 401 ? "invalid_client" : error.status >= 500 ? "server_error" : "invalid_request";
  return oauthJson(
    {
      error: code,
      error_description: error.message,
      message: error.message,
      type: error.type,
      param: error.param,
      code: error.code,
    },
    error.status,
    error.headers,
  );
}

/** Runs an OAuth endpoint: OAuth and HTTP errors become OAuth-shaped answers; anything else propagates. */
export async function answerOAuth(work: () => Promise<Response>): Promise<Response> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof OAuthError || error instanceof HttpError) return oauthErrorResponse(error);
    throw error;
  }
}
