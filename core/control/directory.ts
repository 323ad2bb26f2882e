import type { Records } from "../store/ports.ts";
import { type Membership, getMembership } from "./workspaces/members.ts";
import { findOrganisation, organisationBlocksInlineConfig } from "./organisation/store.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import { type User, normaliseEmail, userStore } from "./users/store.ts";
import { type Workspace, workspaceStore } from "./workspaces/store.ts";

/**
 * Read-only lookups of records other control-plane modules own (workspaces, users, memberships, the
 * organisation record), for authentication and authorisation. Kinds and id prefixes are fixed across the
 * team: WORKSPACE/ws, USER/usr. Writes belong to their owners' modules.
 */

export type WorkspaceLike = Workspace;
export type UserLike = User;
export type { Membership };

/** A workspace of the organisation by id or slug (ResourceStore kind WORKSPACE). */
export async function findWorkspace(
  records: Records,
  organisationId: string,
  idOrSlug: string,
): Promise<WorkspaceLike | undefined> {
  return workspaceStore(records).get(organisationId, idOrSlug);
}

export async function findUser(records: Records, organisationId: string, id: string): Promise<UserLike | undefined> {
  return userStore(records).get(organisationId, id);
}

/** A user by email: users are slugged by their lower-cased email (core/control/users/store.ts). */
export async function findUserByEmail(
  records: Records,
  organisationId: string,
  email: string,
): Promise<UserLike | undefined> {
  const wanted = normaliseEmail(email);
  const user = await userStore(records).get(organisationId, wanted);
  return user && normaliseEmail(user.email) === wanted ? user : undefined;
}

/** The user's membership of a workspace (core/control/workspaces/members.ts). */
export async function findMembership(
  records: Records,
  workspaceId: string,
  userId: string,
): Promise<Membership | undefined> {
  return getMembership(records, workspaceId, userId);
}

/** The organisation's settings object (`ORG#<id>` / `ORG`, field `settings`). */
export async function readOrganisationSettings(
  records: Records,
  organisationId: string,
): Promise<Record<string, unknown>> {
  const item = await records.get(`ORG#${organisationId}`, "ORG");
  return (item?.settings as Record<string, unknown> | undefined) ?? {};
}

const MAX_ENTRIES = 10_000;

/**
 * Organisation settings cached for a short time, for the hot path (block_inline_config): at most one store
 * read per organisation per `ttlMs` in each process.
 */
export class OrganisationSettingsCache {
  private readonly cache: TtlCache<string, Promise<Record<string, unknown>>>;
  /** Keyed by organisation and workspace ids (`org/workspace`). */
  private readonly blocks: TtlCache<string, Promise<boolean>>;
  private readonly retention: TtlCache<string, Promise<number | undefined>>;
  private readonly records: Records;

  constructor(records: Records, ttlMs = 15_000) {
    this.records = records;
    this.cache = new TtlCache({ ttlMs, maxEntries: MAX_ENTRIES });
    this.blocks = new TtlCache({ ttlMs, maxEntries: MAX_ENTRIES });
    this.retention = new TtlCache({ ttlMs, maxEntries: MAX_ENTRIES });
  }

  get(organisationId: string): Promise<Record<string, unknown>> {
    const cached = this.cache.get(organisationId);
    if (cached) return cached;
    const settings = readOrganisationSettings(this.records, organisationId).catch((error) => {
      this.cache.deleteIf(organisationId, settings);
      throw error;
    });
    this.cache.set(organisationId, settings);
    return settings;
  }

  /**
   * Whether the organisation (or the workspace's `security_settings` override) blocks inline configs, by the
   * organisation rule (stored value, else the creation-date default); env BLOCK_INLINE_CONFIG is checked by the caller.
   * Cached like the settings, per organisation and workspace.
   */
  blockInlineConfig(organisationId: string, workspaceId?: string): Promise<boolean> {
    const key = `${organisationId}/${workspaceId ?? ""}`;
    const cached = this.blocks.get(key);
    if (cached) return cached;
    const value: Promise<boolean> = (async () => {
      if (workspaceId) {
        const workspace = await workspaceStore(this.records).get(organisationId, workspaceId);
        const override = (workspace?.security_settings as { block_inline_config?: unknown } | undefined)
          ?.block_inline_config;
        if (typeof override === "boolean") return override;
      }
      const organisation = await findOrganisation(this.records, organisationId);
      return organisation ? organisationBlocksInlineConfig(organisation) : false;
    })().catch((error) => {
      this.blocks.deleteIf(key, value);
      throw error;
    });
    this.blocks.set(key, value);
    return value;
  }

  /** The workspace's log retention in days when it sets one (cached like the rest). */
  logRetentionDays(organisationId: string, workspaceId: string): Promise<number | undefined> {
    const key = `${organisationId}/${workspaceId}`;
    const cached = this.retention.get(key);
    if (cached) return cached;
    const value: Promise<number | undefined> = workspaceStore(this.records)
      .get(organisationId, workspaceId)
      .then((workspace) => workspace?.log_retention_days ?? undefined)
      .catch((error) => {
        this.retention.deleteIf(key, value);
        throw error;
      });
    this.retention.set(key, value);
    return value;
  }

  /** Drops the cached settings (after this process changed them). */
  forget(organisationId: string): void {
    this.cache.delete(organisationId);
    const prefix = `${organisationId}/`;
    this.blocks.deleteWhere((key) => key.startsWith(prefix));
    this.retention.deleteWhere((key) => key.startsWith(prefix));
  }
}
