import { DomainError, type DomainErrorKind } from "../control/errors.ts";
import type { HandlerMap } from "./context.ts";
import { HttpError } from "./errors.ts";

/**
 * THE mapping from the control-plane services' domain errors (core/control/errors.ts) to HTTP errors: status
 * by kind; message, param and code as the service gave them. The error type follows from the status
 * (HttpError), so answers keep OpenAI's error shape.
 */

const STATUS: Record<DomainErrorKind, number> = {
  invalid: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  gone: 410,
};

export function httpErrorOf(error: DomainError): HttpError {
  return new HttpError(STATUS[error.kind], error.message, { param: error.param, code: error.code });
}

/**
 * A family's handlers with domain errors turned into HTTP errors (anything else is rethrown as it is, for the
 * app's own mapping). Control-plane handler modules export their map through this.
 */
export function mapDomainErrors(handlers: HandlerMap): HandlerMap {
  return Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      async (request: Request, ctx: Parameters<typeof handler>[1]) => {
        try {
          return await handler(request, ctx);
        } catch (error) {
          throw error instanceof DomainError ? httpErrorOf(error) : error;
        }
      },
    ]),
  );
}
