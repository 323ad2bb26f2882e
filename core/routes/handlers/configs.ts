import * as z from "zod";
import { workspaceScope } from "../../auth/scopes.ts";
import { listPage, listResponse, readListQuery } from "../../control/list-query.ts";
import { assertWritable, boundWorkspace, isoTime } from "../../control/provider-credentials.ts";
import { slugSchema } from "../../control/provider-credentials-schemas.ts";
import {
  type ConfigResource,
  configStore,
  savedResourceChanged,
  versionKey,
  workspaceStore,
  writeConfigVersion,
} from "../../control/saved-resources.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { badRequest, conflict, notFound } from "../../http/errors.ts";
import { checkJsonDepth, json, readBody, validate } from "../../http/json.ts";
import { compileConfig } from "../../routing/config.ts";
import { loadRegexEngine } from "../../routing/query.ts";
import { maskConfigSecrets, openConfigSecrets, sealConfigSecrets } from "../../control/config-secrets.ts";

/**
 * Saved routing configs (`/v1/configs`, Portkey's /configs): CRUD, versions (every create and update stores the
 * config as version n; `GET /v1/configs/:id?version=n`, `GET /v1/configs/:id/versions`), usable as
 * `x-gateway-config: <id or slug>` (core/control/saved-resources.ts). The `config` is validated by the routing
 * layer's own compiler: a 400 names the path inside it (`config.targets[0].weight`).
 */

/** `config` as an object, or (as Portkey's API accepts) a JSON string of one. */
const configValue = z.union([z.record(z.string(), z.unknown()), z.string()]);
const isDefault = z
  .union([z.boolean(), z.literal(0), z.literal(1)])
  .transform((value) => value === true || value === 1);

const createSchema = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: slugSchema.optional(),
  config: configValue,
  workspace_id: z.string().min(1).optional(),
  is_default: isDefault.optional(),
  isDefault: isDefault.optional(),
});

const updateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  slug: slugSchema.optional(),
  config: configValue.optional(),
  is_default: isDefault.optional(),
  isDefault: isDefault.optional(),
  status: z.literal("active").optional(),
});

async function checkedConfig(value: unknown, ctx: RequestContext): Promise<Record<string, unknown>> {
  const raw = parsedConfig(value);
  await loadRegexEngine();
  compileConfig(raw, ctx.services.trustedHosts, "config");
  return raw as Record<string, unknown>;
}

/** `config` as sent: an object, or a JSON string of one (400 when it is not JSON or nested too deep). */
function parsedConfig(value: unknown): unknown {
  let raw = value;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch (error) {
      throw badRequest(
        `Invalid value for 'config': not valid JSON (${(error as Error).message}).`,
        "config",
        "invalid_config",
      );
    }
  }
  checkJsonDepth(raw, "config", "config");
  return raw;
}

export function presentConfig(config: ConfigResource) {
  return {
    id: config.id,
    object: "config",
    slug: config.slug ?? null,
    name: config.name,
    organisation_id: config.organisationId,
    workspace_id: config.workspaceId ?? null,
    config: maskConfigSecrets(config.config),
    is_default: config.isDefault ? 1 : 0,
    status: config.status,
    version: config.version,
    version_id: String(config.version),
    owner_id: config.createdBy ?? null,
    created_at: isoTime(config.createdAt),
    last_updated_at: isoTime(config.updatedAt),
  };
}

/** Reads a config visible to the caller (404 otherwise). */
async function visibleConfig(ctx: RequestContext): Promise<ConfigResource> {
  const principal = ctx.principal!;
  const idOrSlug = ctx.params.id!;
  const config = await configStore(ctx.services.stores.records).get(principal.organisationId, idOrSlug);
  const bound = boundWorkspace(principal);
  if (!config || (bound && config.workspaceId && config.workspaceId !== bound))
    throw notFound(`No config '${idOrSlug}'.`, "config_not_found");
  return config;
}

export const handlers: HandlerMap = {
  async createConfig(request, ctx) {
    const principal = ctx.principal!;
    const body = await readBody(request, createSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const config = await sealConfigSecrets(ctx.services.stores.secrets, await checkedConfig(body.config, ctx));
    const records = ctx.services.stores.records;
    const created = await configStore(records).create(principal.organisationId, {
      name: body.name,
      slug: body.slug,
      workspaceId: workspaceScope(principal, body.workspace_id),
      config,
      isDefault: body.is_default ?? body.isDefault ?? false,
      status: "active",
      createdBy: principal.userId ?? principal.keyId,
    });
    await writeConfigVersion(records, created, principal);
    const view = await savedResourceChanged(
      ctx,
      { action: "create", resourceType: "config", after: created },
      presentConfig,
    );
    return json(view, { status: 201 });
  },

  async listConfigs(request, ctx) {
    const principal = ctx.principal!;
    const query = readListQuery(request);
    const workspaceId = workspaceScope(principal, query.workspace_id);
    const bound = boundWorkspace(principal);
    const page = await listPage(() =>
      configStore(ctx.services.stores.records).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: (config) => {
          if (bound) return !config.workspaceId || config.workspaceId === bound;
          return !workspaceId || config.workspaceId === workspaceId;
        },
      }),
    );
    return listResponse(page, presentConfig);
  },

  async getConfig(request, ctx) {
    const config = await visibleConfig(ctx);
    const version = new URL(request.url).searchParams.get("version");
    if (version === null) return json(presentConfig(config));
    const n = validate(z.coerce.number().int().min(1), version, "version");
    const item = await ctx.services.stores.records.get(versionKey(config.id, n).pk, versionKey(config.id, n).sk);
    if (!item) throw notFound(`Config '${ctx.params.id}' has no version ${n}.`, "version_not_found");
    return json({
      ...presentConfig(config),
      name: item.name,
      config: maskConfigSecrets(item.config),
      version: n,
      version_id: String(n),
      current_version: config.version,
    });
  },

  async listConfigVersions(request, ctx) {
    const config = await visibleConfig(ctx);
    const query = readListQuery(request);
    const page = await listPage(() =>
      ctx.services.stores.records.query({
        partition: `CONFIG#${config.id}`,
        prefix: "VERSION#",
        order: "desc",
        limit: query.limit,
        cursor: query.cursor,
      }),
    );
    return listResponse(page, (item) => ({
      object: "config.version",
      config_id: config.id,
      version: item.version,
      version_id: String(item.version),
      name: item.name,
      slug: item.slug ?? null,
      config: maskConfigSecrets(item.config),
      created_at: isoTime(item.createdAt as number),
      created_by: item.createdBy ?? null,
    }));
  },

  async updateConfig(request, ctx) {
    const principal = ctx.principal!;
    const body = await readBody(request, updateSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const current = await visibleConfig(ctx);
    assertWritable(principal, current, "configs");
    const changes: Partial<ConfigResource> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.slug !== undefined) changes.slug = body.slug;
    if (body.config !== undefined) {
      // A credential sent back as GET showed it (masked) keeps its stored value: checked with that value.
      const sealed = await sealConfigSecrets(
        ctx.services.stores.secrets,
        parsedConfig(body.config) as Record<string, unknown>,
        current.config,
      );
      await checkedConfig(await openConfigSecrets(ctx.services.stores.secrets, sealed), ctx);
      changes.config = sealed;
    }
    const flag = body.is_default ?? body.isDefault;
    if (flag !== undefined) changes.isDefault = flag;
    const records = ctx.services.stores.records;
    const updated = await configStore(records).update(current, changes);
    await writeConfigVersion(records, updated, principal);
    const view = await savedResourceChanged(
      ctx,
      { action: "update", resourceType: "config", before: current, after: updated },
      presentConfig,
    );
    return json(view);
  },

  async deleteConfig(_request, ctx) {
    const principal = ctx.principal!;
    const config = await visibleConfig(ctx);
    assertWritable(principal, config, "configs");
    const records = ctx.services.stores.records;
    const refs = new Set([config.id, config.slug].filter(Boolean));
    const blocking = await workspaceStore(records).list(principal.organisationId, {
      limit: 1,
      filter: (workspace) => refs.has(workspace.defaults?.user_api_key_config ?? ""),
    });
    const workspace = blocking.items[0];
    if (workspace) {
      throw conflict(
        `Config '${config.slug ?? config.id}' is the default user API key config of workspace '${workspace.slug ?? workspace.id}'; clear defaults.user_api_key_config first.`,
        "id",
      );
    }
    await configStore(records).delete(config);
    // Versions go with the config.
    let cursor: string | undefined;
    do {
      const page = await records.query({ partition: `CONFIG#${config.id}`, prefix: "VERSION#", limit: 100, cursor });
      for (const item of page.items) await records.delete(item.pk, item.sk);
      cursor = page.cursor;
    } while (cursor);
    await savedResourceChanged(ctx, { action: "delete", resourceType: "config", before: config }, presentConfig);
    return json({ id: config.id, object: "config", deleted: true });
  },
};
