import { ConditionFailedError, StoreUnavailableError } from "../../store/ports.ts";

/** An error crossing a thread boundary: its class is found again by name on the other side. */
export interface SentError {
  name: string;
  message: string;
  code?: string;
}

/** An error as it crosses to another thread (worker-records.ts, log-reader-thread.ts). */
export function sendable(error: unknown): SentError {
  const { name, message, code } = error as { name?: string; message?: string; code?: unknown };
  return {
    name: typeof name === "string" ? name : "Error",
    message: typeof message === "string" ? message : String(error),
    ...(typeof code === "string" ? { code } : {}),
  };
}

/** The error the store would have thrown on this thread. */
export function received(error: SentError): Error {
  switch (error.name) {
    case "ConditionFailedError":
      return new ConditionFailedError(error.message);
    case "StoreUnavailableError":
      return new StoreUnavailableError(error.message);
    case "RangeError":
      return new RangeError(error.message);
    case "TypeError":
      return new TypeError(error.message);
    default:
      return Object.assign(new Error(error.message), { name: error.name, code: error.code });
  }
}
