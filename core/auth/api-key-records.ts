import { newId, newSecret, sha256Hex } from "../ids.ts";
import type { Records } from "../store/ports.ts";
import type { Principal } from "./principal.ts";

/**
 * Storage layout of API keys. Each key has two records, written with single-item conditional writes:
 * - the key itself: pk `APIKEY#<id>`, sk `APIKEY`, listed per organisation through gsi1;
 * - the lookup by secret hash: pk `APIKEYHASH#<sha256>`, sk `APIKEYHASH`, holding what authentication needs,
 *   so a request costs one strongly consistent get (and none while cached).
 * The secret itself is never stored.
 */

export interface ApiKeyLookup {
  pk: string;
  sk: string;
  keyId: string;
  status: "active" | "revoked";
  /** Unix seconds; absent for keys that do not expire. */
  expiresAt?: number;
  principal: Principal;
}

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

export interface NewApiKey {
  organisationId: string;
  workspaceId?: string;
  name: string;
  keyType: "organisation" | "workspace";
  keySubType: "service" | "user";
  userId?: string;
  scopes: string[];
  organisationRole?: Principal["organisationRole"];
  workspaceRole?: Principal["workspaceRole"];
  /** Unix seconds. */
  expiresAt?: number;
  createdBy?: string;
  /** A secret chosen by the operator (bootstrap on AWS); generated when absent. */
  secret?: string;
}

/** Creates a key: writes its record and its hash lookup, and returns the secret (shown to the caller once). */
export async function createApiKey(records: Records, input: NewApiKey): Promise<{ id: string; secret: string }> {
  const id = newId("key");
  const secret = input.secret ?? newSecret("gk");
  const hash = sha256Hex(secret);
  const createdAt = Math.floor(Date.now() / 1000);
  const principal: Principal = {
    kind: "api_key",
    organisationId: input.organisationId,
    workspaceId: input.workspaceId,
    keyId: id,
    keyType: input.keyType,
    keySubType: input.keySubType,
    userId: input.userId,
    organisationRole: input.organisationRole,
    workspaceRole: input.workspaceRole,
    scopes: input.scopes,
  };
  await records.put(
    {
      pk: `APIKEY#${id}`,
      sk: "APIKEY",
      gsi1pk: `ORG#${input.organisationId}#APIKEYS`,
      gsi1sk: id,
      id,
      name: input.name,
      organisationId: input.organisationId,
      workspaceId: input.workspaceId,
      keyType: input.keyType,
      keySubType: input.keySubType,
      userId: input.userId,
      scopes: input.scopes,
      status: "active",
      secretHash: hash,
      secretHint: `${secret.slice(0, 5)}...${secret.slice(-4)}`,
      createdAt,
      createdBy: input.createdBy,
      expiresAt: input.expiresAt,
    },
    { exists: false },
  );
  await writeApiKeyLookup(records, hash, { keyId: id, status: "active", expiresAt: input.expiresAt, principal });
  return { id, secret };
}
