import { UpstreamError } from "./types.ts";

/**
 * Maps a provider's error answer to the OpenAI error shape. Understands the common body shapes:
 * OpenAI `{error: {message, type, code, param}}`, Anthropic `{type: "error", error: {type, message}}`,
 * Google `{error: {code, message, status}}`, AWS `{message}` / `{Message}`, and plain text.
 */
export function mapUpstreamError(status: number, bodyText: string): UpstreamError {
  let parsed: any;
  try {
    parsed = JSON.parse(bodyText);
  } catch {
    parsed = undefined;
  }
  const error = parsed?.error ?? parsed;
  const message =
    (typeof error === "string" ? error : undefined) ??
    error?.message ??
    error?.Message ??
    parsed?.message ??
    parsed?.detail ??
    (bodyText.trim().slice(0, 500) || `Upstream answered ${status}`);
  const type =
    typeof error?.type === "string" ? error.type : typeof error?.status === "string" ? error.status : undefined;
  const code = error?.code !== undefined && error?.code !== null ? String(error.code) : (type ?? null);
  return new UpstreamError(status, String(message), {
    type: openAiType(status, type),
    code,
    param: error?.param ?? null,
  });
}

function openAiType(status: number, upstreamType: string | undefined): string {
  if (upstreamType && /^[a-z_]+$/.test(upstreamType) && upstreamType.endsWith("_error")) return upstreamType;
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}
