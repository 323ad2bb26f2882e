import type { Principal } from "../../auth/principal.ts";
import { requireOrganisationAdmin } from "../../control/access.ts";
import { type ControlDeps, audit } from "../../control/deps.ts";
import { Invalid, NotFound, Unauthenticated } from "../../control/errors.ts";
import { newSecret, sha256Hex } from "../../util/ids.ts";
import { type ScimToken, listAll, scimTokenStore, tokenLookupKey } from "./records.ts";

/**
 * SCIM tokens: an organisation admin creates one for its identity provider; the secret is answered once and
 * stored only as a hash. SCIM calls present it as `Authorization: Bearer <token>` and act for the token's
 * organisation only. Revocation deletes the lookup record, so the next call is refused (no cache).
 */

const iso = (seconds: number | undefined) => (seconds ? new Date(seconds * 1000).toISOString() : null);

export function presentScimToken(token: ScimToken) {
  return {
    object: "scim_token",
    id: token.id,
    name: token.name,
    token_hint: token.hint,
    status: token.status,
    created_at: iso(token.createdAt),
    last_updated_at: iso(token.updatedAt),
  };
}

export type ScimTokenView = ReturnType<typeof presentScimToken>;

export async function createScimToken(
  deps: ControlDeps,
  principal: Principal,
  input: { name?: string },
): Promise<{ token: ScimTokenView; secret: string }> {
  requireOrganisationAdmin(principal);
  const name = input.name?.trim() || "SCIM token";
  if (name.length > 200) throw new Invalid("'name' is longer than 200 characters.", { param: "name" });
  const secret = newSecret("scim");
  const hash = sha256Hex(secret);
  const token = await scimTokenStore(deps.records).create(principal.organisationId, {
    name,
    tokenHash: hash,
    hint: `${secret.slice(0, 5)}...${secret.slice(-4)}`,
    status: "active",
    createdBy: { keyId: principal.keyId, userId: principal.userId },
  });
  await deps.records.put(
    { ...tokenLookupKey(hash), tokenId: token.id, organisationId: token.organisationId },
    { exists: false },
  );
  const view = presentScimToken(token);
  await audit(deps, principal, { action: "create", resourceType: "scim_token", resourceId: token.id, after: view });
  return { token: view, secret };
}

export async function listScimTokens(deps: ControlDeps, principal: Principal): Promise<ScimTokenView[]> {
  requireOrganisationAdmin(principal);
  return (await listAll(scimTokenStore(deps.records), principal.organisationId)).map(presentScimToken);
}

export async function revokeScimToken(
  deps: ControlDeps,
  principal: Principal,
  input: { id: string },
): Promise<ScimTokenView> {
  requireOrganisationAdmin(principal);
  const store = scimTokenStore(deps.records);
  const token = await store.get(principal.organisationId, input.id);
  if (!token) throw new NotFound(`No SCIM token '${input.id}'.`, { code: "scim_token_not_found" });
  const key = tokenLookupKey(token.tokenHash);
  await deps.records.delete(key.pk, key.sk);
  const revoked = token.status === "revoked" ? token : await store.update(token, { status: "revoked" });
  const view = presentScimToken(revoked);
  await audit(deps, principal, {
    action: "revoke",
    resourceType: "scim_token",
    resourceId: token.id,
    before: presentScimToken(token),
    after: view,
  });
  return view;
}

/**
 * The principal a SCIM token acts as: organisation-wide, no scopes (it reaches only the SCIM routes, which
 * check for it themselves), its id as the actor's key id in audit entries. Unauthenticated otherwise.
 */
export async function authenticateScimToken(deps: ControlDeps, secret: string | undefined): Promise<Principal> {
  if (!secret) throw new Unauthenticated("Send the SCIM token as 'Authorization: Bearer <token>'.");
  const hash = sha256Hex(secret);
  const pointer = await deps.records.get(tokenLookupKey(hash).pk, tokenLookupKey(hash).sk);
  const token = pointer
    ? await scimTokenStore(deps.records).get(pointer.organisationId as string, pointer.tokenId as string)
    : undefined;
  if (token === undefined || token.status !== "active" || token.tokenHash !== hash)
    throw new Unauthenticated("Invalid or revoked SCIM token.");
  return {
    kind: "api_key",
    organisationId: token.organisationId,
    keyId: token.id,
    keyType: "organisation",
    keySubType: "service",
    scopes: [],
  };
}
