import { sha256Hex } from "../ids.ts";
import { ConditionFailedError, type Records } from "../store/ports.ts";
import { type SecretRef, formatSecretRef } from "../store/secret-refs.ts";

/**
 * Which organisation a secret reference belongs to. The namespace references live in (an env prefix, a folder,
 * an AWS name prefix) is the operator's and shared by every organisation of the gateway, so the first
 * organisation to save a reference owns it, and the gateway resolves it only for that organisation's saved
 * providers: another organisation that writes the same name gets a 403 when saving, and a reference saved
 * before owners were recorded (or by a store copied from elsewhere) resolves for nobody until it is saved
 * again. Records are keyed by a hash of the reference text (a reference can be 2 KB, longer than some stores'
 * keys allow): pk `SECRETREF#<sha256>`, sk `OWNER`.
 */

const SK = "OWNER";
const keyOf = (ref: SecretRef) => `SECRETREF#${sha256Hex(formatSecretRef(ref))}`;

export interface SecretRefOwner {
  organisationId: string;
  /** The user or key that first saved the reference. */
  createdBy?: string;
}

/** The organisation that owns the reference, if any has saved it. */
export async function secretRefOwner(records: Records, ref: SecretRef): Promise<string | undefined> {
  const item = await records.get(keyOf(ref), SK);
  return typeof item?.organisationId === "string" ? item.organisationId : undefined;
}

/**
 * Records `owner` as the reference's owner unless an organisation already is: true when `owner`'s
 * organisation owns it now (it did, or this claim won), false when another organisation does.
 */
export async function claimSecretRef(records: Records, ref: SecretRef, owner: SecretRefOwner): Promise<boolean> {
  const pk = keyOf(ref);
  const current = await secretRefOwner(records, ref);
  if (current !== undefined) return current === owner.organisationId;
  try {
    await records.put(
      {
        pk,
        sk: SK,
        organisationId: owner.organisationId,
        scheme: ref.scheme,
        ...(owner.createdBy ? { createdBy: owner.createdBy } : {}),
        createdAt: Math.floor(Date.now() / 1000),
      },
      { exists: false },
    );
    return true;
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    // Another save claimed it between the read and the write: whoever that was owns it.
    return (await secretRefOwner(records, ref)) === owner.organisationId;
  }
}
