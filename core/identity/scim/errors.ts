/**
 * A SCIM error (RFC 7644 3.12): the HTTP status, SCIM's `scimType` where one applies (`uniqueness`,
 * `invalidFilter`, `invalidValue`, `invalidPath`, `noTarget`, `mutability`, `invalidSyntax`) and the detail.
 * SCIM routes answer every failure in this shape (core/routes/handlers/scim.ts).
 */
export class ScimError extends Error {
  readonly status: number;
  readonly scimType: string | null;
  constructor(status: number, detail: string, scimType: string | null = null) {
    super(detail);
    this.name = "ScimError";
    this.status = status;
    this.scimType = scimType;
  }
}

export const SCIM_ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const LIST_RESPONSE_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
