import { DomainError, type DomainErrorKind } from "../control/errors.ts";
import { HttpError } from "./errors.ts";

/**
 * THE mapping from domain errors (core/control/errors.ts: thrown by the control-plane services and by the
 * shared modules under core/control, core/auth and core/inference/policies) to HTTP errors: status by kind; message,
 * param and code as the thrower gave them. The error type follows from the status (HttpError), so answers keep
 * OpenAI's error shape. The app's `toHttpError` calls it for anything a handler throws.
 */

const STATUS: Record<DomainErrorKind, number> = {
  unauthenticated: 401,
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
 * `fn` with its domain errors thrown as HTTP errors: for the routing seams of Services (saved configs and
 * providers), whose data-plane callers tell a client's error (HttpError, answered as it is) from a failed
 * target (anything else) by type.
 */
export function throwingHttpErrors<A extends unknown[], R>(fn: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  return async (...args) => {
    try {
      return await fn(...args);
    } catch (error) {
      throw error instanceof DomainError ? httpErrorOf(error) : error;
    }
  };
}
