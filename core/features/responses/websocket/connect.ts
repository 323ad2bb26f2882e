import { authenticate } from "../../../auth/authenticate.ts";
import { DomainError } from "../../../control/errors.ts";
import { httpErrorOf } from "../../../http/domain-errors.ts";
import { HttpError, errorResponse } from "../../../http/errors.ts";
import { TRACE_ID_HEADER, traceIdOf } from "../../../http/gateway-headers.ts";
import type { Services } from "../../../services.ts";

/** The path of the Responses WebSocket: the HTTP route's own (the SDKs connect to `<base URL>/responses`). */
export const RESPONSES_SOCKET_PATH = "/v1/responses";

/**
 * The check of a Responses WebSocket upgrade before it is accepted, so that a refusal is an HTTP answer in
 * OpenAI's error shape (a client shows its status; after the upgrade only a close code could): the caller must
 * be authenticated exactly as `POST /v1/responses` requires. Every turn is authenticated again as it runs (a key
 * revoked while the socket is open stops working at its next turn). Undefined when the upgrade may proceed.
 */
export async function refuseResponsesSocket(upgrade: Request, services: Services): Promise<Response | undefined> {
  const traceId = traceIdOf(upgrade.headers);
  try {
    await authenticate(upgrade.headers, services);
    return undefined;
  } catch (error) {
    const http =
      error instanceof HttpError
        ? error
        : error instanceof DomainError
          ? httpErrorOf(error)
          : new HttpError(500, `Internal server error (trace id ${traceId}).`, { code: "internal_error" });
    if (!(error instanceof HttpError || error instanceof DomainError)) console.error(`[${traceId}]`, error);
    return errorResponse(http, { [TRACE_ID_HEADER]: traceId });
  }
}
