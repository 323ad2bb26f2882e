import { UpstreamError } from "../types.ts";
import { CustomHostBlockedError } from "../../security/custom-host.ts";

/** How a failed upstream call reaches the routing layer: UpstreamErrors it can retry, fall back on or answer. */

/** Maps a failed upstream call (client gone, blocked address, network) to an UpstreamError; timeouts are 408s. */
export function transportFailure(error: unknown, clientGone: boolean): UpstreamError {
  if (clientGone) return new UpstreamError(499, "The client closed the request.", { code: "client_closed_request" });
  const direct = error as { code?: string; message?: string; cause?: unknown };
  const cause = (direct.cause ?? direct) as { code?: string; message?: string };
  const blocked =
    direct instanceof CustomHostBlockedError ? direct : cause instanceof CustomHostBlockedError ? cause : undefined;
  if (blocked) {
    return new UpstreamError(400, `Upstream host rejected: ${blocked.message}.`, {
      code: "invalid_custom_host",
      transport: true,
    });
  }
  return new UpstreamError(
    502,
    `Could not reach the provider: ${cause?.code ?? direct.code ?? cause?.message ?? direct.message}`,
    {
      code: "upstream_unreachable",
      transport: true,
    },
  );
}

export const timeoutError = (ms: number) =>
  new UpstreamError(408, `The request timed out after ${ms} ms.`, {
    type: "timeout_error",
    code: "request_timeout",
    transport: true,
  });

/** A 3xx from upstream: never followed (it could point anywhere, private addresses included). */
export function redirectError(response: { status: number; headers: Headers }): UpstreamError {
  const location = response.headers.get("location");
  return new UpstreamError(
    502,
    `The provider answered with a redirect (${response.status}${location ? ` to ${location.slice(0, 200)}` : ""}); the gateway does not follow redirects. Point the target at the final URL.`,
    { code: "upstream_redirect" },
  );
}
