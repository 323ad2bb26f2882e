import type { CheckSpec } from "../guardrails/types.ts";
import { isCredentialField } from "../security/credential-fields.ts";
import { Invalid } from "./errors.ts";
import { maskSecret } from "./provider-credentials.ts";

/**
 * Secrets inside the parameters of a guardrail's checks: any field named like a credential
 * (core/security/credential-fields.ts: `api_key`, `token`, `password`...), at any depth, and every value of a
 * `headers` object (a webhook authenticates with its headers, whatever they are called). Views (GET, list,
 * versions, audit) show them masked; a client may send a masked value back unchanged on update and the stored
 * value is kept, the way saved configs' credentials are (config-secrets.ts).
 */

const MASK = "********";

type Node = Record<string, unknown>;

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether the field `key` of an object holds a secret (`inHeaders`: the object is a `headers` parameter). */
const isSecretField = (key: string, inHeaders: boolean) => inHeaders || isCredentialField(key);

const hintOf = (value: unknown) => (typeof value === "string" ? maskSecret(value) : MASK);

/** What a view shows of a secret, and a client may send back unchanged. */
const looksMasked = (value: unknown) => typeof value === "string" && value.includes(MASK);

function masked(value: unknown, inHeaders = false): unknown {
  if (Array.isArray(value)) return value.map((item) => masked(item));
  if (!isNode(value)) return value;
  const out: Node = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = isSecretField(key, inHeaders) && item != null ? hintOf(item) : masked(item, key === "headers");
  }
  return out;
}

/** The checks as views show them: every secret parameter masked. */
export function maskCheckSecrets(checks: readonly CheckSpec[]): CheckSpec[] {
  return checks.map((check) => ({ ...check, parameters: masked(check.parameters) as Node }));
}

/**
 * `value` with every masked secret replaced by the stored value at the same place of `previous` (the same check
 * of the guardrail being updated), when that value's mask is what was sent. A masked secret with nothing to
 * keep (a new check, a changed place, or a create) is Invalid: storing the mask would break the check silently.
 */
function restored(value: unknown, previous: unknown, path: string, inHeaders = false): unknown {
  if (Array.isArray(value)) {
    const before = Array.isArray(previous) ? previous : [];
    return value.map((item, index) => restored(item, before[index], `${path}[${index}]`));
  }
  if (!isNode(value)) return value;
  const before = isNode(previous) ? previous : {};
  const out: Node = {};
  for (const [key, item] of Object.entries(value)) {
    const place = `${path}.${key}`;
    if (isSecretField(key, inHeaders) && looksMasked(item)) {
      const kept = before[key];
      if (kept == null || hintOf(kept) !== item) {
        throw new Invalid(
          `Invalid value for '${place}': a masked secret can only be sent back to the place it was read from; send the secret itself.`,
          { param: place, code: "masked_secret" },
        );
      }
      out[key] = kept;
    } else {
      out[key] = restored(item, before[key], place, key === "headers");
    }
  }
  return out;
}

/**
 * The checks a client sent, with masked secrets restored from `previous` (the stored checks on update; none on
 * create). A check keeps a stored secret only at the same index and with the same check id.
 */
export function restoreCheckSecrets(checks: readonly CheckSpec[], previous: readonly CheckSpec[] = []): CheckSpec[] {
  return checks.map((check, index) => {
    const stored = previous[index]?.id === check.id ? previous[index]!.parameters : undefined;
    return { ...check, parameters: restored(check.parameters, stored, `checks[${index}].parameters`) as Node };
  });
}
