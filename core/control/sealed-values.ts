import type { Secrets } from "../store/ports.ts";
import { maskSecret } from "./credentials/credentials.ts";

/**
 * One secret sealed through the Secrets port inside a record that is otherwise plain JSON (a saved config's
 * credentials, a saved guardrail's secret check parameters): `{"$sealed": <ciphertext of the value's JSON>,
 * "hint": <masked>}`. Views show the hint; a client sends the hint back to keep the stored value. Values stored
 * before sealing existed (legacy plaintext) are shown masked the same way.
 */

export interface SealedValue {
  $sealed: string;
  hint: string;
}

/** What views show of a secret that gives no hint (too short, or not a string). */
export const MASK = "********";

export function isSealed(value: unknown): value is SealedValue {
  return typeof value === "object" && value !== null && typeof (value as SealedValue).$sealed === "string";
}

/** A secret as clients see it: the hint of a sealed one, a plaintext one masked. */
export function hintOf(value: unknown): string {
  if (isSealed(value)) return value.hint;
  return typeof value === "string" ? maskSecret(value) : MASK;
}

/** What a view shows of a secret, and a client may send back unchanged to keep the stored value. */
export const looksMasked = (value: unknown): boolean => typeof value === "string" && value.includes(MASK);

/**
 * `value` (any JSON, taken as plaintext even if it looks sealed: input never holds trusted ciphertext) sealed,
 * with the hint views show of it.
 */
export async function sealValue(secrets: Secrets, value: unknown): Promise<SealedValue> {
  const hint = typeof value === "string" ? maskSecret(value) : MASK;
  return { $sealed: await secrets.encrypt(JSON.stringify(value)), hint };
}

/** The value `sealValue` sealed. Throws when the ciphertext was made with another key or tampered with. */
export async function openValue(secrets: Secrets, sealed: SealedValue): Promise<unknown> {
  return JSON.parse(await secrets.decrypt(sealed.$sealed));
}
