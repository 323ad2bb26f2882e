import * as z from "zod";
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
import { isKnownScope } from "../auth/scope-list.ts";
import { firstMissingScope, isOrganisationWide, managesWorkspace } from "../auth/scopes.ts";
import type { RequestContext } from "../http/context.ts";
import { badRequest, forbidden, notFound } from "../http/errors.ts";
import { sha256Hex } from "../ids.ts";
import { applyKeyLimits, parseKeyLimits } from "../policies/key-policies.ts";
import { findMembership, findUser, findWorkspace } from "./directory.ts";
import { configStore } from "./saved-resources.ts";

/**
 * API key management (spec 2.11, 4.8, 5.5): creation by type and sub-type, rotation settings, rotation with
 * an overlap, revocation, and who may do what. Routes: core/routes/handlers/api-keys.ts.
 */

/** How long the previous secret keeps working after a rotation. */
export const ROTATION_OVERLAP_SECONDS = 600;

const DAY = 86_400;

/** `weekly` -> 7, `monthly` -> 30, integers (or integer strings) 1..365. */
export function normaliseRotationPeriod(value: unknown, param: string): number {
  if (value === "weekly") return 7;
  if (value === "monthly") return 30;
  const days = typeof value === "string" && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof days !== "number" || !Number.isInteger(days) || days < 1 || days > 365) {
    throw badRequest(
      `'${param}' must be 'weekly', 'monthly' or an integer number of days from 1 to 365.`,
      param,
      "invalid_rotation_period",
    );
  }
  return days;
}

/** The last second of year 9999: later instants have no 4-digit ISO 8601 form (and 1e308 none at all). */
const LATEST_UNIX_SECONDS = 253_402_300_799;

/** ISO date-time or Unix seconds (milliseconds are recognised) -> Unix seconds, up to the year 9999. */
export function toUnixSeconds(value: unknown, param: string): number {
  let seconds: number | undefined;
  if (typeof value === "number" && Number.isFinite(value)) seconds = Math.floor(value > 1e12 ? value / 1000 : value);
  else if (typeof value === "string" && value.trim() !== "") {
    const parsed = Date.parse(value);
    if (!Number.isNaN(parsed)) seconds = Math.floor(parsed / 1000);
  }
  if (seconds === undefined || seconds < 0 || seconds > LATEST_UNIX_SECONDS)
    throw badRequest(
      `'${param}' must be an ISO 8601 date-time or Unix seconds, between 1970 and the end of 9999.`,
      param,
      "invalid_value",
    );
  return seconds;
}

const timeValue = z.union([z.string(), z.number()]).nullable().optional();

export const keyFieldsSchema = z.looseObject({
  name: z.string().trim().min(1).max(200).optional(),
  description: z.string().max(2000).nullable().optional(),
  scopes: z.array(z.string()).max(200).optional(),
  // portkey-ai sends `defaults` as an open object; `config_id` (id or slug) routes the key's requests.
  defaults: z
    .looseObject({ config_id: z.string().trim().min(1).max(128).nullable().optional() })
    .nullable()
    .optional(),
  rotation_period: z.union([z.string(), z.number()]).nullable().optional(),
  rotation_period_days: z.union([z.string(), z.number()]).nullable().optional(),
  next_rotation_at: timeValue,
  expires_at: timeValue,
});

export const createKeySchema = keyFieldsSchema.extend({
  name: z.string().trim().min(1).max(200),
  workspace_id: z.string().min(1).optional(),
  user_id: z.string().min(1).optional(),
  type: z.string().optional(),
  "sub-type": z.string().optional(),
});

export type KeyFields = z.infer<typeof keyFieldsSchema>;

export function validateScopes(scopes: string[], creator: Principal): string[] {
  for (const [index, scope] of scopes.entries()) {
    if (!isKnownScope(scope))
      throw badRequest(
        `Unknown scope '${scope}'. GET the scope list from the README (core/auth/scope-list.ts).`,
        `scopes[${index}]`,
        "invalid_scope",
      );
  }
  // Nobody grants more than they hold, whatever the type of their key (only `*` holders may grant `*`).
  const missing = firstMissingScope(creator, scopes);
  if (missing)
    throw forbidden(`You cannot grant the scope '${missing}', which your own key lacks.`, "scope_escalation");
  return [...new Set(scopes)];
}

/**
 * Rotation settings of a create or update: `rotation_period` xor `rotation_period_days`, `next_rotation_at`
 * (refused when the organisation enforces rotation for this kind of key), computed when absent.
 */
export function rotationSettings(
  body: KeyFields,
  options: { enforcedDays?: number; current?: ApiKeyRecord; now: number },
): Pick<ApiKeyRecord, "rotationPeriodDays" | "nextRotationAt"> {
  const hasPeriod = body.rotation_period != null;
  const hasDays = body.rotation_period_days != null;
  if (hasPeriod && hasDays) {
    throw badRequest(
      "Send either 'rotation_period' or 'rotation_period_days', not both.",
      "rotation_period_days",
      "mutually_exclusive",
    );
  }
  if (body.next_rotation_at != null && options.enforcedDays !== undefined) {
    throw badRequest(
      "'next_rotation_at' cannot be set by hand: the organisation enforces key rotation (user_api_key_rotation_period).",
      "next_rotation_at",
      "rotation_enforced",
    );
  }
  let days = options.current?.rotationPeriodDays ?? options.enforcedDays;
  if (hasPeriod) days = normaliseRotationPeriod(body.rotation_period, "rotation_period");
  if (hasDays) days = normaliseRotationPeriod(body.rotation_period_days, "rotation_period_days");
  if (options.enforcedDays !== undefined && days !== undefined && days > options.enforcedDays) {
    throw badRequest(
      `The organisation requires rotation at least every ${options.enforcedDays} days.`,
      hasDays ? "rotation_period_days" : "rotation_period",
      "rotation_enforced",
    );
  }
  let next = options.current?.nextRotationAt;
  if (body.next_rotation_at != null) {
    next = toUnixSeconds(body.next_rotation_at, "next_rotation_at");
    if (next <= options.now)
      throw badRequest("'next_rotation_at' must be in the future.", "next_rotation_at", "invalid_value");
  } else if (days !== undefined && (hasPeriod || hasDays || next === undefined)) {
    const from = options.current?.lastRotatedAt ?? options.current?.createdAt ?? options.now;
    next = Math.max(from + days * DAY, options.now);
  }
  return { rotationPeriodDays: days, nextRotationAt: next };
}

/** The organisation's enforced rotation period for user keys (setting `user_api_key_rotation_period`), if any. */
export async function enforcedRotationDays(
  ctx: RequestContext,
  organisationId: string,
  subType: KeySubType,
): Promise<number | undefined> {
  if (subType !== "user") return undefined;
  const settings = await ctx.services.orgSettings.get(organisationId);
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
  if (at <= now) throw badRequest("'expires_at' must be in the future.", "expires_at", "invalid_value");
  return at;
}

/**
 * A key's `defaults`, with `config_id` (id or slug) checked and stored as the config's id: it must name a config
 * the key could use (an organisation-level one or one of the key's workspace); 400 otherwise, unknown or not.
 */
async function keyDefaults(
  ctx: RequestContext,
  defaults: KeyFields["defaults"],
  workspaceId: string | undefined,
): Promise<Record<string, unknown> | undefined> {
  if (!defaults) return undefined;
  const { config_id: ref, ...rest } = defaults;
  if (ref === undefined || ref === null) return rest;
  const config = await configStore(ctx.services.stores.records).get(ctx.principal!.organisationId, ref);
  if (!config || (workspaceId !== undefined && config.workspaceId !== undefined && config.workspaceId !== workspaceId))
    throw badRequest(`No config '${ref}' this key can use.`, "defaults.config_id", "config_not_found");
  return { ...rest, config_id: config.id };
}

/** Whether the caller manages `workspaceId`, re-reading a user key's membership (roles change). */
async function callerManages(ctx: RequestContext, workspaceId: string): Promise<boolean> {
  const principal = ctx.principal!;
  if (isOrganisationWide(principal)) return true;
  if (principal.workspaceId !== workspaceId) return false;
  if (principal.userId && principal.kind === "api_key" && principal.keySubType === "user") {
    const membership = await findMembership(ctx.services.stores.records, workspaceId, principal.userId);
    return membership?.role === "manager";
  }
  return managesWorkspace(principal, workspaceId);
}

export async function createKey(
  ctx: RequestContext,
  type: string,
  subType: string,
  body: z.infer<typeof createKeySchema>,
) {
  const principal = ctx.principal!;
  const records = ctx.services.stores.records;
  if (type !== "organisation" && type !== "workspace")
    throw badRequest(`Unknown key type '${type}': use 'organisation' or 'workspace'.`, "type", "invalid_key_type");
  if (subType !== "service" && subType !== "user")
    throw badRequest(`Unknown key sub-type '${subType}': use 'service' or 'user'.`, "sub-type", "invalid_key_type");
  if (type === "organisation" && subType === "user")
    throw badRequest(
      "Organisation keys are service keys: use /api-keys/organisation/service.",
      "sub-type",
      "invalid_key_type",
    );
  const keyType = type as KeyType;
  const keySubType = subType as KeySubType;

  let workspaceId: string | undefined;
  if (keyType === "organisation") {
    if (!isOrganisationWide(principal))
      throw forbidden("Creating an organisation key needs an organisation-level key.", "admin_required");
  } else {
    const requested = body.workspace_id ?? (isOrganisationWide(principal) ? undefined : principal.workspaceId);
    if (!requested)
      throw badRequest("'workspace_id' is required for workspace keys.", "workspace_id", "missing_required_parameter");
    if (!isOrganisationWide(principal) && requested !== principal.workspaceId) {
      throw forbidden("This key cannot create keys in another workspace.", "workspace_forbidden");
    }
    const workspace = await findWorkspace(records, principal.organisationId, requested);
    if (!workspace) throw notFound(`No workspace '${requested}'.`, "workspace_not_found");
    workspaceId = workspace.id;
    if (!(await callerManages(ctx, workspaceId))) {
      throw forbidden(
        "Only organisation admins and managers of this workspace can create its API keys.",
        "role_forbidden",
      );
    }
  }

  let userId: string | undefined;
  let workspaceRole: Principal["workspaceRole"];
  let organisationRole: Principal["organisationRole"];
  if (keySubType === "user") {
    if (!body.user_id)
      throw badRequest("'user_id' is required for user keys.", "user_id", "missing_required_parameter");
    const user = await findUser(records, principal.organisationId, body.user_id);
    if (!user) throw notFound(`No user '${body.user_id}'.`, "user_not_found");
    userId = user.id;
    organisationRole = user.role;
    const membership = await findMembership(records, workspaceId!, user.id);
    if (!membership)
      throw badRequest(
        `User '${user.id}' is not a member of workspace '${workspaceId}'.`,
        "user_id",
        "user_not_member",
      );
    workspaceRole = membership.role;
  } else if (body.user_id) {
    throw badRequest("'user_id' is only accepted for user keys.", "user_id", "invalid_value");
  }

  const scopes = validateScopes(body.scopes ?? [], principal);
  const limits = parseKeyLimits(body); // `usage_limits` / `rate_limits`: policies on this key (core/policies)
  const now = Math.floor(Date.now() / 1000);
  const enforcedDays = await enforcedRotationDays(ctx, principal.organisationId, keySubType);
  const rotation = rotationSettings(body, { enforcedDays, now });
  const created = await createApiKey(records, {
    organisationId: principal.organisationId,
    workspaceId,
    name: body.name,
    description: body.description ?? undefined,
    keyType,
    keySubType,
    userId,
    scopes,
    // Only user keys carry a role (their user's); a service key's rights are its scopes.
    organisationRole,
    workspaceRole,
    expiresAt: expiry(body, now),
    ...rotation,
    defaults: await keyDefaults(ctx, body.defaults, workspaceId),
    createdBy: principal.keyId ?? principal.userId,
  });
  await applyKeyLimits(ctx, created.key, limits);
  return created;
}

/** A key the caller may see (404 otherwise: never confirm another workspace's key exists). */
export async function visibleKey(ctx: RequestContext, id: string): Promise<ApiKeyRecord> {
  const principal = ctx.principal!;
  const key = await apiKeyStore(ctx.services.stores.records).get(principal.organisationId, id);
  if (!key || !canSee(principal, key)) throw notFound(`No API key '${id}'.`, "api_key_not_found");
  return key;
}

export function canSee(principal: Principal, key: ApiKeyRecord): boolean {
  if (isOrganisationWide(principal)) return true;
  return key.keyType === "workspace" && key.workspaceId !== undefined && key.workspaceId === principal.workspaceId;
}

/**
 * Update, rotate and revoke: organisation-level callers; managers (and service keys) of the key's workspace;
 * a key itself. In every case the caller must hold each of the key's scopes: rotating a key hands over its new
 * secret, and changing or revoking a stronger key is an escalation too.
 */
export async function requireManageKey(ctx: RequestContext, key: ApiKeyRecord): Promise<void> {
  const principal = ctx.principal!;
  if (principal.keyId === key.id) return;
  if (key.keyType === "organisation") {
    if (!isOrganisationWide(principal))
      throw forbidden("Only organisation-level keys can change organisation keys.", "admin_required");
  } else if (!(await callerManages(ctx, key.workspaceId!))) {
    throw forbidden(
      "Only organisation admins and managers of this workspace can change its API keys.",
      "role_forbidden",
    );
  }
  const missing = firstMissingScope(principal, key.scopes);
  if (missing)
    throw forbidden(
      `This key holds the scope '${missing}', which your own key lacks: only a key holding all its scopes can change it.`,
      "scope_escalation",
    );
}

export async function updateKey(ctx: RequestContext, key: ApiKeyRecord, body: KeyFields): Promise<ApiKeyRecord> {
  const records = ctx.services.stores.records;
  const now = Math.floor(Date.now() / 1000);
  const changes: Partial<ApiKeyRecord> = {};
  const limits = parseKeyLimits(body);
  if (body.name !== undefined) changes.name = body.name;
  if (body.description !== undefined) changes.description = body.description ?? undefined;
  if (body.defaults !== undefined) changes.defaults = await keyDefaults(ctx, body.defaults, key.workspaceId);
  if (body.scopes !== undefined) changes.scopes = validateScopes(body.scopes, ctx.principal!);
  if (body.expires_at !== undefined) changes.expiresAt = expiry(body, now);
  const enforcedDays = await enforcedRotationDays(ctx, key.organisationId, key.keySubType);
  Object.assign(changes, rotationSettings(body, { enforcedDays, current: key, now }));
  const updated = await apiKeyStore(records).update(key, changes);
  if (updated.status === "active") {
    const principal = principalOf(updated);
    await updateApiKeyLookup(records, updated.secretHash, { principal, expiresAt: updated.expiresAt });
    for (const hash of updated.previousSecretHashes ?? []) await updateApiKeyLookup(records, hash, { principal });
  }
  forgetAll(ctx, updated);
  await applyKeyLimits(ctx, updated, limits);
  return updated;
}

export async function revokeKey(ctx: RequestContext, key: ApiKeyRecord): Promise<ApiKeyRecord> {
  const records = ctx.services.stores.records;
  for (const hash of [key.secretHash, ...(key.previousSecretHashes ?? [])])
    await updateApiKeyLookup(records, hash, { status: "revoked" });
  const revoked = key.status === "revoked" ? key : await apiKeyStore(records).update(key, { status: "revoked" });
  forgetAll(ctx, key);
  return revoked;
}

/** Revokes every active key of a user (when the user is deleted): a deleted user's keys must stop working. */
export async function revokeUserKeys(ctx: RequestContext, organisationId: string, userId: string): Promise<string[]> {
  const store = apiKeyStore(ctx.services.stores.records);
  const revoked: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(organisationId, {
      limit: 100,
      cursor,
      filter: (key) => key.userId === userId && key.status !== "revoked",
    });
    for (const key of page.items) {
      await revokeKey(ctx, key);
      revoked.push(key.id);
    }
    cursor = page.cursor;
  } while (cursor);
  return revoked;
}

export async function rotateKey(
  ctx: RequestContext,
  key: ApiKeyRecord,
): Promise<{ key: ApiKeyRecord; secret: string; previousExpiresAt: number }> {
  if (key.status !== "active") throw badRequest("A revoked key cannot be rotated.", "id", "api_key_revoked");
  const records = ctx.services.stores.records;
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
  forgetAll(ctx, key);
  return { key: updated, secret, previousExpiresAt };
}

function forgetAll(ctx: RequestContext, key: ApiKeyRecord): void {
  for (const hash of [key.secretHash, ...(key.previousSecretHashes ?? [])]) ctx.services.apiKeys.forget(hash);
}

/** Null for an absent time, and for one no date can show (stored before dates were validated). */
const iso = (seconds: number | undefined) =>
  seconds === undefined || !(Math.abs(seconds) <= LATEST_UNIX_SECONDS) ? null : new Date(seconds * 1000).toISOString();

/** The public shape (portkey-ai `ApiKeysGetResponse`): never the secret, only its masked hint in `key`. */
export function presentKey(key: ApiKeyRecord) {
  return {
    id: key.id,
    object: "api-key",
    name: key.name,
    description: key.description ?? null,
    type: `${key.keyType}-${key.keySubType}`,
    key_type: key.keyType,
    sub_type: key.keySubType,
    key: key.secretHint,
    organisation_id: key.organisationId,
    workspace_id: key.workspaceId ?? null,
    user_id: key.userId ?? null,
    status: key.status,
    scopes: key.scopes,
    defaults: key.defaults ?? null,
    rotation_period_days: key.rotationPeriodDays ?? null,
    next_rotation_at: iso(key.nextRotationAt),
    last_rotated_at: iso(key.lastRotatedAt),
    expires_at: iso(key.expiresAt),
    created_at: iso(key.createdAt),
    last_updated_at: iso(key.updatedAt),
  };
}
