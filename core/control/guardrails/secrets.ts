import type { CheckSpec } from "../../inference/guardrails/types.ts";
import { isCredentialField } from "../../security/credential-fields.ts";
import type { Secrets } from "../../store/ports.ts";
import { Invalid } from "../errors.ts";
import { hintOf, isSealed, looksMasked, openValue, sealValue } from "../sealed-values.ts";

/**
 * Secrets inside the parameters of guardrail checks: any field named like a credential
 * (core/security/credential-fields.ts: `api_key`, `token`, `password`...), at any depth; every value of a
 * `headers` object (a webhook authenticates with its headers, whatever they are called); and a `headers`
 * parameter written as JSON text (as Portkey's UI stores a webhook's). They are stored sealed
 * (sealed-values.ts), opened by the data plane, shown as their hints by views (GET, list, versions, audit); a
 * client may send a hint back unchanged on update to keep the stored value, the way saved configs'
 * credentials are (config-secrets.ts). Secrets stored in plaintext before (legacy) are used as they are, shown
 * masked, and sealed when the checks are next saved.
 *
 * Checks live in two places: a saved guardrail's `checks` (guardrails/service.ts), and the guardrails written
 * inline in a saved config (`input_guardrails`, `before_request_hooks`...: config-secrets.ts), whose entries'
 * own keys are actions, check ids and the like, never secrets.
 */

type Node = Record<string, unknown>;
type Segment = string | number;

/** What becomes of one secret, found at `at` (its place below the walked value). */
type Replace = (secret: unknown, at: readonly Segment[]) => unknown;

/** A copy of a value of one shape (a guardrail's checks, a config's guardrail list) with `replace` applied to every secret. */
type Walk = (value: unknown, replace: Replace) => unknown;

const isNode = (value: unknown): value is Node => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Whether the field `key` of an object holds a secret (`inHeaders`: the object is a `headers` parameter). A
 * `headers` parameter is a secret whole when written as JSON text, and so once sealed.
 */
function isSecret(key: string, value: unknown, inHeaders: boolean): boolean {
  if (value === null || value === undefined) return false;
  if (inHeaders || isCredentialField(key)) return true;
  return key === "headers" && (typeof value === "string" || isSealed(value));
}

/**
 * `value` with every secret replaced (a secret, even an object, is replaced whole and never walked into).
 * Objects are rebuilt with Object.fromEntries, which keeps a `__proto__` key of parsed JSON as a plain key.
 */
function mapSecrets(value: unknown, replace: Replace, at: Segment[] = [], inHeaders = false): unknown {
  if (Array.isArray(value)) return value.map((item, index) => mapSecrets(item, replace, [...at, index]));
  if (!isNode(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => {
      const place = [...at, key];
      const secret = isSecret(key, item, inHeaders);
      return [key, secret ? replace(item, place) : mapSecrets(item, replace, place, key === "headers")];
    }),
  );
}

/** A saved guardrail's checks (`{id, parameters, name?, is_enabled?}`: only the parameters can hold secrets). */
const inChecks: Walk = (checks, replace) => mapSecrets(checks, replace);

/** A config's guardrail list: a saved guardrail's id, or an inline guardrail whose own keys are never secrets. */
const inGuardrailList: Walk = (list, replace) => {
  if (!Array.isArray(list)) return list;
  return list.map((entry, index) => {
    if (!isNode(entry)) return entry;
    return Object.fromEntries(
      Object.entries(entry).map(([key, value]) => [key, mapSecrets(value, replace, [index, key])]),
    );
  });
};

/** `walk` with an asynchronous `replace`: every secret's replacement is awaited together, then put in place. */
async function replaceAll(walk: Walk, value: unknown, replace: (secret: unknown) => Promise<unknown>) {
  const pending: Promise<unknown>[] = [];
  walk(value, (secret) => {
    pending.push(replace(secret));
    return secret;
  });
  if (pending.length === 0) return value;
  const replaced = await Promise.all(pending);
  let next = 0;
  return walk(value, () => replaced[next++]);
}

/** Seals every secret: what is walked is plaintext (a sealed-looking object sent by a client is sealed as data). */
const sealAll = (walk: Walk, secrets: Secrets, value: unknown) =>
  replaceAll(walk, value, (secret) => sealValue(secrets, secret));

/** Opens every sealed secret; legacy plaintext ones are already open. */
const openAll = (walk: Walk, secrets: Secrets, value: unknown) =>
  replaceAll(walk, value, async (secret) => (isSealed(secret) ? openValue(secrets, secret) : secret));

/**
 * `value` with every masked secret replaced by the value stored at the same place of `previous` (sealed or
 * not), when that value's hint is what was sent. A masked secret with nothing to keep (a new place, another
 * check, or a create) is Invalid: storing the mask would break the check silently. `path` names the value.
 */
function restore(walk: Walk, value: unknown, previous: unknown, path: string): unknown {
  return walk(value, (secret, at) => {
    if (!looksMasked(secret)) return secret;
    const kept = valueAt(previous, at);
    if (kept === null || kept === undefined || hintOf(kept) !== secret) {
      const place = path + at.map((segment) => (typeof segment === "number" ? `[${segment}]` : `.${segment}`)).join("");
      throw new Invalid(
        `Invalid value for '${place}': a masked secret can only be sent back to the place it was read from; send the secret itself.`,
        { param: place, code: "masked_secret" },
      );
    }
    return kept;
  });
}

function valueAt(value: unknown, at: readonly Segment[]): unknown {
  let current = value;
  for (const segment of at) {
    if (typeof current !== "object" || current === null) return undefined;
    current = (current as Record<Segment, unknown>)[segment];
  }
  return current;
}

// --- a saved guardrail's checks ------------------------------------------------------------------------------

/** The checks as views show them: every secret parameter as its hint. */
export const maskCheckSecrets = (checks: readonly CheckSpec[]): CheckSpec[] => inChecks(checks, hintOf) as CheckSpec[];

/**
 * The checks a client sent, with masked secrets restored from `previous` (the stored checks, opened, on
 * update; none on create). A check keeps a stored secret only at the same index and with the same check id.
 */
export function restoreCheckSecrets(checks: readonly CheckSpec[], previous: readonly CheckSpec[] = []): CheckSpec[] {
  const sameChecks = checks.map((check, index) => (previous[index]?.id === check.id ? previous[index] : undefined));
  return restore(inChecks, checks, sameChecks, "checks") as CheckSpec[];
}

/** The checks as stored: every secret parameter sealed (`checks` are plaintext: restored and validated). */
export const sealCheckSecrets = async (secrets: Secrets, checks: readonly CheckSpec[]): Promise<CheckSpec[]> =>
  (await sealAll(inChecks, secrets, checks)) as CheckSpec[];

/** The checks the runner takes: sealed secret parameters opened. */
export const openCheckSecrets = async (secrets: Secrets, checks: readonly CheckSpec[]): Promise<CheckSpec[]> =>
  (await openAll(inChecks, secrets, checks)) as CheckSpec[];

// --- a guardrail list of a config node (input_guardrails, before_request_hooks...) ---------------------------

/** The list as views show it: every secret check parameter as its hint. */
export const maskGuardrailListSecrets = (list: unknown): unknown => inGuardrailList(list, hintOf);

/** The list a client sent, masked secrets restored from the same place of `previous`; `path` names the list. */
export const restoreGuardrailListSecrets = (list: unknown, previous: unknown, path: string): unknown =>
  restore(inGuardrailList, list, previous, path);

/** The list as stored: every secret check parameter sealed (`list` is plaintext). */
export const sealGuardrailListSecrets = (secrets: Secrets, list: unknown): Promise<unknown> =>
  sealAll(inGuardrailList, secrets, list);

/** The list routing compiles: sealed secret check parameters opened. */
export const openGuardrailListSecrets = (secrets: Secrets, list: unknown): Promise<unknown> =>
  openAll(inGuardrailList, secrets, list);
