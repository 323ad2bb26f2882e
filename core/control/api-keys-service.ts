import {
  type ApiKeyRecord,
  type KeySubType,
  type KeyType,
  apiKeyStore,
  createApiKey,
  newApiKeySecret,
  principalOf,
  secretHint,
  updateApiKeyLookup,
  writeApiKeyLookup,
} from "../auth/api-key-records.ts";
import type { Principal } from "../auth/principal.ts";
import { firstMissingScope, isOrganisationWide, managesWorkspace, workspaceScope } from "../auth/scopes.ts";
import { sha256Hex } from "../ids.ts";
import type { PolicyResource } from "../policies/model.ts";
import { applyKeyLimits, parseKeyLimits } from "../policies/key-policies.ts";
import type { Page } from "../store/ports.ts";
import {
  DAY,
  ROTATION_OVERLAP_SECONDS,
  canSee,
  normaliseRotationPeriod,
  presentKey,
  rotationSettings,
  toUnixSeconds,
  validateScopes,
} from "./api-keys.ts";
import type { KeyCreateInput, KeyFields } from "./api-keys-schemas.ts";
import { type ControlDeps, audit } from "./deps.ts";
import { findMembership, findUser, findWorkspace } from "./directory.ts";
import { Forbidden, Invalid, NotFound } from "./errors.ts";
import { type Lazy, resolveLazy } from "./lazy.ts";
import { type PageRequest, readPage } from "./paging.ts";
import { configStore } from "./saved-resources.ts";

/**
 * API key management (spec 2.11, 4.8, 5.5): creation by type and sub-type, listing, rotation with an overlap,
 * revocation, and who may do what. Nobody grants or changes more than they hold: a key grants only scopes it
 * holds, and only a caller holding all of a key's scopes may change, rotate or revoke it. Every change is
 * audited (never with the secret).
 */

export interface ApiKeyDeps extends ControlDeps {
  /** The organisation's settings (`user_api_key_rotation_period` enforces rotation of user keys). */
  organisationSettings(organisationId: string): Promise<Record<string, unknown>>;
  /** Drops this process's cached lookup of a key secret's hash (after an update, rotation or revocation). */
  forgetKey(secretHash: string): void;
  /** A policy of a key's `usage_limits` / `rate_limits` changed (the enforcer reloads it). */
  policyChanged(organisationId: string, policy: PolicyResource | undefined, removedId?: string): void;
}

export type KeyView = ReturnType<typeof presentKey>;

/** A created or rotated key: its view and the secret, shown this once. */
export interface KeyWithSecret {
  key: KeyView;
  secret: string;
}

export interface KeyRef {
  key: string;
}

/** The organisation's enforced rotation period for user keys (setting `user_api_key_rotation_period`), if any. */
async function enforcedRotationDays(
  deps: ApiKeyDeps,
  organisationId: string,
  subType: KeySubType,
): Promise<number | undefined> {
  if (subType !== "user") return undefined;
  const settings = await deps.organisationSettings(organisationId);
  const value = settings.user_api_key_rotation_period;
  if (value === undefined || value === null || value === "" || value === false) return undefined;
  try {
    return normaliseRotationPeriod(value, "user_api_key_rotation_period");
  } catch {
    return undefined;
  }
}

function expiry(body: KeyFields, now: number): number | undefined {
  if (body.expires_at == null) return undefined;
  const at = toUnixSeconds(body.expires_at, "expires_at");
  if (at <= now)
    throw new Invalid("'expires_at' must be in the future.", { param: "expires_at", code: "invalid_value" });
  return at;
}

/**
 * A key's `defaults`, with `config_id` (id or slug) checked and stored as the config's id: it must name a config
 * the key could use (an organisation-level one or one of the key's workspace); Invalid otherwise, unknown or not.
 */
async function keyDefaults(
  deps: ControlDeps,
  principal: Principal,
  defaults: KeyFields["defaults"],
  workspaceId: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (!defaults) return undefined;
  const { config_id: ref, ...rest } = defaults;
  if (ref === undefined || ref === null) return rest;
  const config = await configStore(deps.records).get(principal.organisationId, ref, { workspaceId });
  if (!config || (workspaceId !== undefined && config.workspaceId !== undefined && config.workspaceId !== workspaceId))
    throw new Invalid(`No config '${ref}' this key can use.`, {
      param: "defaults.config_id",
      code: "config_not_found",
    });
  return { ...rest, config_id: config.id };
}

/** Whether the caller manages `workspaceId`, re-reading a user key's membership (roles change). */
async function callerManages(deps: ControlDeps, principal: Principal, workspaceId: string): Promise<boolean> {
  if (isOrganisationWide(principal)) return true;
  if (principal.workspaceId !== workspaceId) return false;
  if (principal.userId && principal.kind === "api_key" && principal.keySubType === "user") {
    const membership = await findMembership(deps.records, workspaceId, principal.userId);
    return membership?.role === "manager";
  }
  return managesWorkspace(principal, workspaceId);
}

/** The workspace a new key of `keyType` belongs to, after checking the caller may create keys there. */
async function newKeyWorkspace(
  deps: ControlDeps,
  principal: Principal,
  keyType: KeyType,
  requestedWorkspace: string | undefined,
): Promise<string | undefined> {
  if (keyType === "organisation") {
    if (!isOrganisationWide(principal))
      throw new Forbidden("Creating an organisation key needs an organisation-level key.", { code: "admin_required" });
    return undefined;
  }
  const requested = requestedWorkspace ?? (isOrganisationWide(principal) ? undefined : principal.workspaceId);
  if (!requested)
    throw new Invalid("'workspace_id' is required for workspace keys.", {
      param: "workspace_id",
      code: "missing_required_parameter",
    });
  if (!isOrganisationWide(principal) && requested !== principal.workspaceId)
    throw new Forbidden("This key cannot create keys in another workspace.", { code: "workspace_forbidden" });
  const workspace = await findWorkspace(deps.records, principal.organisationId, requested);
  if (!workspace) throw new NotFound(`No workspace '${requested}'.`, { code: "workspace_not_found" });
  if (!(await callerManages(deps, principal, workspace.id)))
    throw new Forbidden("Only organisation admins and managers of this workspace can create its API keys.", {
      code: "role_forbidden",
    });
  return workspace.id;
}

/** The user a new user key acts for, with the roles it carries (a service key has none). */
async function newKeyUser(
  deps: ControlDeps,
  principal: Principal,
  keySubType: KeySubType,
  userId: string | undefined,
  workspaceId: string | undefined,
): Promise<Pick<ApiKeyRecord, "userId" | "organisationRole" | "workspaceRole">> {
  if (keySubType !== "user") {
    if (userId)
      throw new Invalid("'user_id' is only accepted for user keys.", { param: "user_id", code: "invalid_value" });
    return {};
  }
  if (!userId)
    throw new Invalid("'user_id' is required for user keys.", { param: "user_id", code: "missing_required_parameter" });
  const user = await findUser(deps.records, principal.organisationId, userId);
  if (!user) throw new NotFound(`No user '${userId}'.`, { code: "user_not_found" });
  const membership = await findMembership(deps.records, workspaceId!, user.id);
  if (!membership)
    throw new Invalid(`User '${user.id}' is not a member of workspace '${workspaceId}'.`, {
      param: "user_id",
      code: "user_not_member",
    });
  return { userId: user.id, organisationRole: user.role, workspaceRole: membership.role };
}

function keyKind(type: string | undefined, subType: string | undefined): { keyType: KeyType; keySubType: KeySubType } {
  if (!type || !subType)
    throw new Invalid("Name the key type and sub-type: POST /v1/api-keys/{type}/{sub-type}.", {
      param: "type",
      code: "missing_required_parameter",
    });
  if (type !== "organisation" && type !== "workspace")
    throw new Invalid(`Unknown key type '${type}': use 'organisation' or 'workspace'.`, {
      param: "type",
      code: "invalid_key_type",
    });
  if (subType !== "service" && subType !== "user")
    throw new Invalid(`Unknown key sub-type '${subType}': use 'service' or 'user'.`, {
      param: "sub-type",
      code: "invalid_key_type",
    });
  if (type === "organisation" && subType === "user")
    throw new Invalid("Organisation keys are service keys: use /api-keys/organisation/service.", {
      param: "sub-type",
      code: "invalid_key_type",
    });
  return { keyType: type, keySubType: subType };
}

/**
 * Creates a key of `type` / `subType` (from the path, else the body's `type` / `sub-type`). Its `usage_limits`
 * and `rate_limits` become policies on it (core/policies/key-policies.ts).
 */
export async function createKey(
  deps: ApiKeyDeps,
  principal: Principal,
  input: { type?: string; subType?: string; body: KeyCreateInput },
): Promise<KeyWithSecret> {
  const { body } = input;
  const { keyType, keySubType } = keyKind(input.type ?? body.type, input.subType ?? body["sub-type"]);
  const workspaceId = await newKeyWorkspace(deps, principal, keyType, body.workspace_id);
  const user = await newKeyUser(deps, principal, keySubType, body.user_id, workspaceId);
  const scopes = validateScopes(body.scopes ?? [], principal);
  const limits = parseKeyLimits(body);
  const now = Math.floor(Date.now() / 1000);
  const enforcedDays = await enforcedRotationDays(deps, principal.organisationId, keySubType);
  const rotation = rotationSettings(body, { enforcedDays, now });
  const created = await createApiKey(deps.records, {
    organisationId: principal.organisationId,
    workspaceId,
    name: body.name,
    description: body.description ?? undefined,
    keyType,
    keySubType,
    scopes,
    // Only user keys carry a role (their user's); a service key's rights are its scopes.
    ...user,
    expiresAt: expiry(body, now),
    ...rotation,
    defaults: await keyDefaults(deps, principal, body.defaults, workspaceId),
    createdBy: principal.keyId ?? principal.userId,
  });
  await applyKeyLimits(deps, principal, created.key, limits);
  const view = presentKey(created.key);
  await audit(deps, principal, {
    action: "create",
    resourceType: "api_key",
    resourceId: created.key.id,
    workspaceId: created.key.workspaceId,
    after: view,
  });
  return { key: view, secret: created.secret };
}

/** The keys the caller may see, optionally of one workspace. */
export async function listKeys(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string },
): Promise<Page<KeyView>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const page = await readPage(() =>
    apiKeyStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (key) => canSee(principal, key) && (workspaceId === undefined || key.workspaceId === workspaceId),
    }),
  );
  return { items: page.items.map(presentKey), cursor: page.cursor };
}

/** Up to 100 keys by id; those the caller may not see (or that do not exist) are left out. */
export async function lookupKeys(deps: ControlDeps, principal: Principal, input: { ids: string[] }) {
  const ids = [...new Set(input.ids)];
  if (ids.length === 0)
    throw new Invalid("'ids' must list at least one key id.", { param: "ids", code: "invalid_value" });
  if (ids.length > 100)
    throw new Invalid("'ids' may list at most 100 key ids.", { param: "ids", code: "invalid_value" });
  const store = apiKeyStore(deps.records);
  const found = await Promise.all(
    ids.map((id) => (store.isId(id) ? store.get(principal.organisationId, id) : undefined)),
  );
  return found.filter((key): key is ApiKeyRecord => key !== undefined && canSee(principal, key)).map(presentKey);
}

/** A key the caller may see (NotFound otherwise: never confirm another workspace's key exists). */
async function loadVisible(deps: ControlDeps, principal: Principal, id: string): Promise<ApiKeyRecord> {
  const key = await apiKeyStore(deps.records).get(principal.organisationId, id);
  if (!key || !canSee(principal, key)) throw new NotFound(`No API key '${id}'.`, { code: "api_key_not_found" });
  return key;
}

/**
 * Update, rotate and revoke: organisation-level callers; managers (and service keys) of the key's workspace;
 * a key itself. In every case the caller must hold each of the key's scopes: rotating a key hands over its new
 * secret, and changing or revoking a stronger key is an escalation too.
 */
async function loadManageable(deps: ControlDeps, principal: Principal, id: string): Promise<ApiKeyRecord> {
  const key = await loadVisible(deps, principal, id);
  if (principal.keyId === key.id) return key;
  if (key.keyType === "organisation") {
    if (!isOrganisationWide(principal))
      throw new Forbidden("Only organisation-level keys can change organisation keys.", { code: "admin_required" });
  } else if (!(await callerManages(deps, principal, key.workspaceId!))) {
    throw new Forbidden("Only organisation admins and managers of this workspace can change its API keys.", {
      code: "role_forbidden",
    });
  }
  const missing = firstMissingScope(principal, key.scopes);
  if (missing)
    throw new Forbidden(
      `This key holds the scope '${missing}', which your own key lacks: only a key holding all its scopes can change it.`,
      { code: "scope_escalation" },
    );
  return key;
}

export async function getKey(deps: ControlDeps, principal: Principal, input: KeyRef): Promise<KeyView> {
  return presentKey(await loadVisible(deps, principal, input.key));
}

export async function updateKey(
  deps: ApiKeyDeps,
  principal: Principal,
  input: KeyRef & { changes: Lazy<KeyFields> },
): Promise<KeyView> {
  const key = await loadManageable(deps, principal, input.key);
  const body = await resolveLazy(input.changes);
  const now = Math.floor(Date.now() / 1000);
  const changes: Partial<ApiKeyRecord> = {};
  const limits = parseKeyLimits(body);
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description ?? undefined;
  if (body.defaults !== undefined)
    changes.defaults = await keyDefaults(deps, principal, body.defaults, key.workspaceId);
  if (body.scopes !== undefined) changes.scopes = validateScopes(body.scopes, principal);
  if (body.expires_at !== undefined) changes.expiresAt = expiry(body, now);
  const enforcedDays = await enforcedRotationDays(deps, key.organisationId, key.keySubType);
  Object.assign(changes, rotationSettings(body, { enforcedDays, current: key, now }));
  const records = deps.records;
  const updated = await apiKeyStore(records).update(key, changes);
  if (updated.status === "active") {
    const keyPrincipal = principalOf(updated);
    await updateApiKeyLookup(records, updated.secretHash, { principal: keyPrincipal, expiresAt: updated.expiresAt });
    for (const hash of updated.previousSecretHashes ?? [])
      await updateApiKeyLookup(records, hash, { principal: keyPrincipal });
  }
  forgetAll(deps, updated);
  await applyKeyLimits(deps, principal, updated, limits);
  await auditChange(deps, principal, "update", key, updated);
  return presentKey(updated);
}

/** A new secret; the previous one keeps working for ROTATION_OVERLAP_SECONDS (never past the key's expiry). */
export async function rotateKey(
  deps: ApiKeyDeps,
  principal: Principal,
  input: KeyRef,
): Promise<KeyWithSecret & { previousExpiresAt: number }> {
  const key = await loadManageable(deps, principal, input.key);
  if (key.status !== "active")
    throw new Invalid("A revoked key cannot be rotated.", { param: "id", code: "api_key_revoked" });
  const records = deps.records;
  const now = Math.floor(Date.now() / 1000);
  const secret = newApiKeySecret();
  const hash = sha256Hex(secret);
  const previousExpiresAt = Math.min(key.expiresAt ?? Number.POSITIVE_INFINITY, now + ROTATION_OVERLAP_SECONDS);
  const updated = await apiKeyStore(records).update(key, {
    secretHash: hash,
    secretHint: secretHint(secret),
    previousSecretHashes: [...(key.previousSecretHashes ?? []), key.secretHash].slice(-10),
    lastRotatedAt: now,
    nextRotationAt: key.rotationPeriodDays ? now + key.rotationPeriodDays * DAY : key.nextRotationAt,
  });
  await writeApiKeyLookup(records, hash, {
    keyId: key.id,
    status: "active",
    expiresAt: key.expiresAt,
    principal: principalOf(updated),
  });
  await updateApiKeyLookup(records, key.secretHash, { expiresAt: previousExpiresAt });
  forgetAll(deps, key);
  await auditChange(deps, principal, "rotate", key, updated);
  return { key: presentKey(updated), secret, previousExpiresAt };
}

/** Revokes the key (its secrets stop working at once); the record stays, with status `revoked`. */
export async function revokeKey(deps: ApiKeyDeps, principal: Principal, input: KeyRef): Promise<{ id: string }> {
  const key = await loadManageable(deps, principal, input.key);
  const revoked = await revoke(deps, key);
  await auditChange(deps, principal, "delete", key, revoked);
  return { id: key.id };
}

/** Revokes every active key of a user (when the user is deleted): a deleted user's keys must stop working. */
export async function revokeUserKeys(deps: ApiKeyDeps, organisationId: string, userId: string): Promise<string[]> {
  const store = apiKeyStore(deps.records);
  const revoked: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(organisationId, {
      limit: 100,
      cursor,
      filter: (key) => key.userId === userId && key.status !== "revoked",
    });
    for (const key of page.items) {
      await revoke(deps, key);
      revoked.push(key.id);
    }
    cursor = page.cursor;
  } while (cursor);
  return revoked;
}

async function revoke(deps: ApiKeyDeps, key: ApiKeyRecord): Promise<ApiKeyRecord> {
  for (const hash of [key.secretHash, ...(key.previousSecretHashes ?? [])])
    await updateApiKeyLookup(deps.records, hash, { status: "revoked" });
  const revoked = key.status === "revoked" ? key : await apiKeyStore(deps.records).update(key, { status: "revoked" });
  forgetAll(deps, key);
  return revoked;
}

function forgetAll(deps: ApiKeyDeps, key: ApiKeyRecord): void {
  for (const hash of [key.secretHash, ...(key.previousSecretHashes ?? [])]) deps.forgetKey(hash);
}

function auditChange(
  deps: ControlDeps,
  principal: Principal,
  action: string,
  before: ApiKeyRecord,
  after: ApiKeyRecord,
) {
  return audit(deps, principal, {
    action,
    resourceType: "api_key",
    resourceId: before.id,
    workspaceId: before.workspaceId,
    before: presentKey(before),
    after: presentKey(after),
  });
}
