/**
 * Domain errors of the control-plane services: what went wrong, in the service's terms. Services throw them;
 * the HTTP layer maps each kind to a status in one place (core/http/domain-errors.ts). This module imports
 * nothing, so any layer may depend on it.
 *
 * `param` names the input field at fault (the same names the request body uses); `code` is a stable machine
 * code clients can branch on.
 */

export type DomainErrorKind = "unauthenticated" | "invalid" | "forbidden" | "not_found" | "conflict" | "gone";

export interface DomainErrorDetails {
  param?: string | null;
  code?: string | null;
}

export abstract class DomainError extends Error {
  abstract readonly kind: DomainErrorKind;
  readonly param: string | null;
  readonly code: string | null;

  constructor(message: string, details: DomainErrorDetails, defaultCode: string | null) {
    super(message);
    this.name = new.target.name;
    this.param = details.param ?? null;
    this.code = details.code === undefined ? defaultCode : details.code;
  }
}

/** The call has no (valid) principal: nobody to check rights for. */
export class Unauthenticated extends DomainError {
  readonly kind = "unauthenticated";
  constructor(message: string, details: DomainErrorDetails = {}) {
    super(message, details, "invalid_api_key");
  }
}

/** The input is malformed or names something that does not exist as a reference (a config, a workspace...). */
export class Invalid extends DomainError {
  readonly kind = "invalid";
  constructor(message: string, details: DomainErrorDetails = {}) {
    super(message, details, null);
  }
}

/** The principal may not do this. */
export class Forbidden extends DomainError {
  readonly kind = "forbidden";
  constructor(message: string, details: DomainErrorDetails = {}) {
    super(message, details, "forbidden");
  }
}

/** The addressed resource does not exist, or the principal may not know that it does. */
export class NotFound extends DomainError {
  readonly kind = "not_found";
  constructor(message: string, details: DomainErrorDetails = {}) {
    super(message, details, "not_found");
  }
}

/** The resource's state refuses the change (a duplicate, a concurrent write, a rule such as "not the default"). */
export class Conflict extends DomainError {
  readonly kind = "conflict";
  constructor(message: string, details: DomainErrorDetails = {}) {
    super(message, details, "conflict");
  }
}

/** The resource existed but is used up for good (an accepted, revoked or expired invite). */
export class Gone extends DomainError {
  readonly kind = "gone";
  constructor(message: string, details: DomainErrorDetails = {}) {
    super(message, details, null);
  }
}

/** True for a conflict from a store write (a duplicate slug, a concurrent change). */
export function isConflict(error: unknown): error is Conflict {
  return error instanceof Conflict;
}
