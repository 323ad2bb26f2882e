import { UpstreamError } from "../../providers/types.ts";
import { NO_SECRET_REFS, SecretRefError, type SecretResolver, parseSecretRef } from "../../store/secret-refs.ts";
import { Invalid } from "../errors.ts";
import { type ProviderSecrets, SECRET_FIELD_NAMES } from "./secrets.ts";

/**
 * Secret references in saved provider credentials (core/store/secret-refs.ts): checked when saved, shown as
 * written (a reference is not a secret), and replaced by the secret's value only when a request uses them.
 */

/** Refuses a malformed reference when a credential is saved (Invalid naming the field). */
export function checkCredentialRefs(secrets: ProviderSecrets, paramOf: (field: string) => string): void {
  for (const [field, value] of Object.entries(secrets) as Array<[keyof ProviderSecrets, string | undefined]>) {
    if (!value) continue;
    try {
      parseSecretRef(value);
    } catch (error) {
      if (!(error instanceof SecretRefError)) throw error;
      throw new Invalid(`Invalid secret reference in '${paramOf(SECRET_FIELD_NAMES[field])}': ${error.message}`, {
        param: paramOf(SECRET_FIELD_NAMES[field]),
        code: "invalid_secret_reference",
      });
    }
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

/**
 * The secrets with every reference resolved. A reference that cannot be resolved fails the request with 502
 * (503 when the secret store could not be reached) naming the saved provider and the field, never a value.
 */
export async function resolveCredentialRefs(
  secrets: ProviderSecrets,
  resolver: SecretResolver | undefined,
  slug: string,
): Promise<ProviderSecrets> {
  const resolved: ProviderSecrets = { ...secrets };
  for (const [field, value] of Object.entries(secrets) as Array<[keyof ProviderSecrets, string | undefined]>) {
    if (!value) continue;
    try {
      const ref = parseSecretRef(value);
      if (ref) resolved[field] = await (resolver ?? NO_SECRET_REFS).resolve(ref);
    } catch (error) {
      if (!(error instanceof SecretRefError)) throw error;
      const name = SECRET_FIELD_NAMES[field];
      const unavailable = error.reason === "unavailable";
      throw new UpstreamError(
        unavailable ? 503 : 502,
        `The credential '${name}' of saved provider '@${slug}' is a secret reference that could not be resolved: ${error.message}`,
        { code: unavailable ? "secret_store_unavailable" : "secret_reference_unresolved" },
      );
    }
  }
  return resolved;
}
