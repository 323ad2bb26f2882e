import { type Resource, ResourceStore } from "../control/resource-store.ts";
import { newSecret, sha256Hex } from "../util/ids.ts";
import type { Records } from "../store/ports.ts";
import type { Principal } from "./principal.ts";

/**
 * Storage layout of API keys. Each key has two records, written with single-item conditional writes:
 * - the key itself: a ResourceStore resource of kind `APIKEY` (pk `APIKEY#<id>`, sk `APIKEY`, listed per
 *   organisation through gsi1 `ORG#<org>#APIKEY`), holding name, scopes, rotation settings and the hash;
 * - the lookup by secret hash: pk `APIKEYHASH#<sha256>`, sk `APIKEYHASH`, holding what authentication needs,
 *   so a request costs one strongly consistent get (and none while cached).
 * The secret itself is never stored. Rotation writes a lookup for the new secret and gives the old lookup an
 * `expiresAt` (the overlap during which both work).
 */

export const APIKEY_KIND = "APIKEY";
export const APIKEY_PREFIX = "key";

export type KeyType = "organisation" | "workspace";
export type KeySubType = "service" | "user";

export interface ApiKeyRecord extends Resource {
  name: string;
  description?: string;
  keyType: KeyType;
  keySubType: KeySubType;
  userId?: string;
  scopes: string[];
  status: "active" | "revoked";
  secretHash: string;
  /** First and last characters of the secret, shown instead of it. */
  secretHint: string;
  /** Hashes of earlier secrets (rotation), so revocation can revoke them too. */
  previousSecretHashes?: string[];
  organisationRole?: Principal["organisationRole"];
  workspaceRole?: Principal["workspaceRole"];
  /** Unix seconds; absent for keys that do not expire. */
  expiresAt?: number;
  rotationPeriodDays?: number;
  /** Unix seconds. */
  nextRotationAt?: number;
  lastRotatedAt?: number;
  defaults?: Record<string, unknown>;
  createdBy?: string;
}

export interface ApiKeyLookup {
  pk: string;
  sk: string;
  keyId: string;
  status: "active" | "revoked";
  /** Unix seconds; absent for keys that do not expire. */
  expiresAt?: number;
  principal: Principal;
}

export const apiKeyStore = (records: Records) => new ResourceStore<ApiKeyRecord>(records, APIKEY_KIND, APIKEY_PREFIX);

export const apiKeyHashKey = (hash: string) => ({ pk: `APIKEYHASH#${hash}`, sk: "APIKEYHASH" });

export async function readApiKeyLookup(records: Records, hash: string): Promise<ApiKeyLookup | undefined> {
  const { pk, sk } = apiKeyHashKey(hash);
  return (await records.get(pk, sk)) as ApiKeyLookup | undefined;
}

export async function writeApiKeyLookup(
  records: Records,
  hash: string,
  lookup: Omit<ApiKeyLookup, "pk" | "sk">,
): Promise<void> {
  await records.put({ ...apiKeyHashKey(hash), ...lookup }, { exists: false });
}

/** Applies a change to a key's lookup record (absent lookups are ignored). */
export async function updateApiKeyLookup(records: Records, hash: string, set: Record<string, unknown>): Promise<void> {
  const { pk, sk } = apiKeyHashKey(hash);
  if (!(await records.get(pk, sk))) return;
  await records.update(pk, sk, { set });
}

export function principalOf(key: ApiKeyRecord): Principal {
  return {
    kind: "api_key",
    organisationId: key.organisationId,
    workspaceId: key.workspaceId,
    keyId: key.id,
    keyType: key.keyType,
    keySubType: key.keySubType,
    userId: key.userId,
    organisationRole: key.organisationRole,
    workspaceRole: key.workspaceRole,
    scopes: key.scopes,
    defaultConfigId: typeof key.defaults?.config_id === "string" ? key.defaults.config_id : undefined,
  };
}

export const secretHint = (secret: string) => `${secret.slice(0, 5)}...${secret.slice(-4)}`;

export const newApiKeySecret = () => newSecret("gk");

/** What a new key is given: its record's own fields (the rest is derived), and an operator-chosen secret. */
export type NewApiKey = Pick<
  ApiKeyRecord,
  | "organisationId"
  | "workspaceId"
  | "name"
  | "description"
  | "keyType"
  | "keySubType"
  | "userId"
  | "scopes"
  | "organisationRole"
  | "workspaceRole"
  | "expiresAt"
  | "rotationPeriodDays"
  | "nextRotationAt"
  | "defaults"
  | "createdBy"
> & {
  /** A secret chosen by the operator (bootstrap on AWS); generated when absent. */
  secret?: string;
};

/** Creates a key: writes its record and its hash lookup, and returns the secret (shown to the caller once). */
export async function createApiKey(
  records: Records,
  input: NewApiKey,
): Promise<{ id: string; secret: string; key: ApiKeyRecord }> {
  const { secret: chosen, organisationId, ...fields } = input;
  const secret = chosen ?? newApiKeySecret();
  const hash = sha256Hex(secret);
  const key = await apiKeyStore(records).create(organisationId, {
    ...withoutUndefined(fields),
    status: "active",
    secretHash: hash,
    secretHint: secretHint(secret),
  } as Omit<ApiKeyRecord, "id" | "organisationId" | "version" | "createdAt" | "updatedAt">);
  await writeApiKeyLookup(records, hash, {
    keyId: key.id,
    status: "active",
    expiresAt: input.expiresAt,
    principal: principalOf(key),
  });
  return { id: key.id, secret, key };
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
