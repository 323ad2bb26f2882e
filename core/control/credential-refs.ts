import type { Principal } from "../auth/principal.ts";
import { holdsScope } from "../auth/scopes.ts";
import { UpstreamError } from "../providers/types.ts";
import type { Records } from "../store/ports.ts";
import { NO_SECRET_REFS, SecretRefError, type SecretResolver, parseSecretRef } from "../store/secret-refs.ts";
import { Forbidden, Invalid } from "./errors.ts";
import { type ProviderSecrets, SECRET_FIELD_NAMES } from "./provider-secrets.ts";
import { claimSecretRef, secretRefOwner } from "./secret-ref-owners.ts";

/**
 * Secret references in saved provider credentials (core/store/secret-refs.ts): checked when saved, shown as
 * written (a reference is not a secret), and replaced by the secret's value only when a request uses them.
 * A reference reads what the gateway process can read, so saving one is an operator-grade act: it needs the
 * `secret_references.create` scope, a name inside the namespace the operator configured (the platform's
 * resolver admits it), and the reference becomes its organisation's (secret-ref-owners.ts); resolving checks
 * the namespace and the owner again.
 */

/** The scope a principal needs to save a secret reference (org owners and admins hold it through `*`). */
export const SECRET_REFERENCES_SCOPE = "secret_references.create";

const fieldsOf = (secrets: ProviderSecrets) =>
  Object.entries(secrets) as Array<[keyof ProviderSecrets, string | undefined]>;

/** Refuses a malformed reference when a credential is saved (Invalid naming the field). */
export function checkCredentialRefs(secrets: ProviderSecrets, paramOf: (field: string) => string): void {
  for (const [field, value] of fieldsOf(secrets)) {
    if (!value) continue;
    try {
      parseSecretRef(value);
    } catch (error) {
      if (!(error instanceof SecretRefError)) throw error;
      throw invalidRef(paramOf(SECRET_FIELD_NAMES[field]), error);
    }
  }
}

const invalidRef = (param: string, error: SecretRefError) =>
  new Invalid(`Invalid secret reference in '${param}': ${error.message}`, { param, code: "invalid_secret_reference" });

export interface SecretRefDeps {
  records: Records;
  /** The platform's resolver; none: no reference is admitted. */
  secretRefs?: SecretResolver;
}

/**
 * The save-time rules for every reference in `secrets` that `stored` (the credentials kept from before, on an
 * update) does not already hold at the same field: a reference sent back unchanged is not saved anew, so a
 * caller without the scope may still edit the rest of an integration. Each new one needs the scope (403), must
 * be admitted by the platform (400), and is claimed for the principal's organisation (403 when another owns it).
 */
export async function admitCredentialRefs(
  deps: SecretRefDeps,
  principal: Principal,
  secrets: ProviderSecrets,
  stored: ProviderSecrets,
  paramOf: (field: string) => string,
): Promise<void> {
  for (const [field, value] of fieldsOf(secrets)) {
    if (!value || stored[field] === value) continue;
    const ref = parseSecretRef(value);
    if (!ref) continue;
    const param = paramOf(SECRET_FIELD_NAMES[field]);
    if (!holdsScope(principal, SECRET_REFERENCES_SCOPE))
      throw new Forbidden(
        `Saving a secret reference in '${param}' needs the '${SECRET_REFERENCES_SCOPE}' scope; send the secret itself.`,
        { param, code: "missing_scope" },
      );
    try {
      (deps.secretRefs ?? NO_SECRET_REFS).admit(ref);
    } catch (error) {
      if (!(error instanceof SecretRefError)) throw error;
      throw invalidRef(param, error);
    }
    const owner = { organisationId: principal.organisationId, createdBy: principal.userId ?? principal.keyId };
    if (!(await claimSecretRef(deps.records, ref, owner)))
      throw new Forbidden(`The secret reference in '${param}' belongs to another organisation.`, {
        param,
        code: "secret_reference_forbidden",
      });
  }
}

/** The reference a stored secret field holds, as the hint shows it; undefined for a plain secret. */
export function referenceHint(value: string): string | undefined {
  try {
    return parseSecretRef(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Whose saved provider the secrets belong to, for the owner check, and how it is named in errors. */
export interface CredentialOwner {
  records: Records;
  organisationId: string;
  slug: string;
}

/**
 * The secrets with every reference resolved. A reference that cannot be resolved (outside the operator's
 * namespace, owned by another organisation or by none, missing) fails the request with 502 (503 when the
 * secret store could not be reached) naming the saved provider and the field, never a value.
 */
export async function resolveCredentialRefs(
  secrets: ProviderSecrets,
  resolver: SecretResolver | undefined,
  owner: CredentialOwner,
): Promise<ProviderSecrets> {
  const resolved: ProviderSecrets = { ...secrets };
  for (const [field, value] of fieldsOf(secrets)) {
    if (!value) continue;
    try {
      const ref = parseSecretRef(value);
      if (!ref) continue;
      // Owner first: another organisation's reference is not even looked up.
      if ((await secretRefOwner(owner.records, ref)) !== owner.organisationId)
        throw new SecretRefError("invalid", "The reference is not registered to this organisation.");
      resolved[field] = await (resolver ?? NO_SECRET_REFS).resolve(ref);
    } catch (error) {
      if (!(error instanceof SecretRefError)) throw error;
      const name = SECRET_FIELD_NAMES[field];
      const unavailable = error.reason === "unavailable";
      throw new UpstreamError(
        unavailable ? 503 : 502,
        `The credential '${name}' of saved provider '@${owner.slug}' is a secret reference that could not be resolved: ${error.message}`,
        { code: unavailable ? "secret_store_unavailable" : "secret_reference_unresolved" },
      );
    }
  }
  return resolved;
}
