import * as z from "zod";
import { requireAdmin, workspaceScope } from "../../auth/scopes.ts";
import { listPage, listResponse, readListQuery } from "../../control/list-query.ts";
import {
  assertWritable,
  boundWorkspace,
  isoTime,
  parseCredentialInput,
  presentCredentials,
  providerId,
  sealCredentials,
  slugFrom,
  updateCredentials,
} from "../../control/provider-credentials.ts";
import {
  type ConfigurationsInput,
  configurationsSchema,
  slugSchema,
} from "../../control/provider-credentials-schemas.ts";
import {
  type VirtualKeyResource,
  canUseProvider,
  savedResourceChanged,
  virtualKeyStore,
} from "../../control/saved-resources.ts";
import { NO_WORKSPACE_ACCESS, applyWorkspaceAccess, presentWorkspaceAccess } from "../../control/workspace-access.ts";
import { workspaceAccessSchema } from "../../control/workspace-access-schemas.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { forbidden, notFound } from "../../http/errors.ts";
import { json, readBody } from "../../http/json.ts";

/**
 * Legacy virtual keys (Portkey's /virtual-keys): a provider and its key (+ configurations), encrypted exactly
 * like integrations (core/control/provider-credentials.ts), used through `x-gateway-virtual-key: <slug>` or a
 * config target's `virtual_key`. The slug is generated from the name when not given. Fields the Portkey SDK
 * may send that this gateway does not implement here (`usage_limits`, `rate_limits`) are ignored.
 * Workspace access is the integrations' rule (core/control/workspace-access.ts): an organisation-level virtual
 * key serves no workspace until `PUT /v1/virtual-keys/:slug/workspaces` enables it for some (or all).
 */

const text = z.string().trim().min(1);

/** Portkey's flat Azure fields (`resourceName`, `deploymentName`, `apiVersion`) and our `configurations`. */
const flatFields = {
  resourceName: text.optional(),
  deploymentName: text.optional(),
  apiVersion: text.optional(),
  resource_name: text.optional(),
  deployment_name: text.optional(),
  api_version: text.optional(),
  custom_host: text.optional(),
  configurations: configurationsSchema.optional(),
  model_config: configurationsSchema.optional(),
};

const createSchema = z.object({
  name: z.string().trim().min(1).max(255),
  provider: text,
  key: z.string().min(1).max(16_384).optional(),
  slug: slugSchema.optional(),
  note: z.string().max(2000).nullable().optional(),
  workspace_id: z.string().min(1).optional(),
  ...flatFields,
});

const updateSchema = z.object({
  name: z.string().trim().min(1).max(255).optional(),
  key: z.string().min(1).max(16_384).optional(),
  note: z.string().max(2000).nullable().optional(),
  ...flatFields,
});

type FlatInput = { [K in keyof typeof flatFields]?: z.infer<(typeof flatFields)[K]> };

function configurationsOf(body: FlatInput): ConfigurationsInput | undefined {
  const merged: ConfigurationsInput = {
    ...(body.model_config ?? {}),
    ...(body.configurations ?? {}),
  };
  const flat = {
    resource_name: body.resource_name ?? body.resourceName,
    deployment_name: body.deployment_name ?? body.deploymentName,
    api_version: body.api_version ?? body.apiVersion,
    custom_host: body.custom_host,
  };
  for (const [name, value] of Object.entries(flat))
    if (value !== undefined) (merged as Record<string, unknown>)[name] = value;
  return Object.keys(merged).length > 0 ? merged : undefined;
}

export function presentVirtualKey(virtualKey: VirtualKeyResource) {
  const credentials = presentCredentials(virtualKey.credentials);
  return {
    id: virtualKey.id,
    object: "virtual-key",
    slug: virtualKey.slug,
    name: virtualKey.name,
    ai_provider_name: virtualKey.credentials.provider,
    provider: virtualKey.credentials.provider,
    note: virtualKey.note ?? null,
    status: virtualKey.status,
    organisation_id: virtualKey.organisationId,
    workspace_id: virtualKey.workspaceId ?? null,
    global_workspace_access: virtualKey.workspaceId
      ? null
      : { enabled: (virtualKey.workspaceAccess ?? NO_WORKSPACE_ACCESS).global },
    masked_api_key: credentials.masked_api_key,
    model_config: credentials.configurations,
    version: virtualKey.version,
    created_at: isoTime(virtualKey.createdAt),
    last_updated_at: isoTime(virtualKey.updatedAt),
  };
}

async function visibleVirtualKey(ctx: RequestContext): Promise<VirtualKeyResource> {
  const principal = ctx.principal!;
  const slug = ctx.params.slug!;
  const virtualKey = await virtualKeyStore(ctx.services.stores.records).get(principal.organisationId, slug);
  if (!virtualKey || !canUseProvider(principal, { kind: "virtual_key", resource: virtualKey })) {
    throw notFound(`No virtual key '${slug}'.`, "virtual_key_not_found");
  }
  return virtualKey;
}

export const handlers: HandlerMap = {
  async createVirtualKey(request, ctx) {
    const principal = ctx.principal!;
    const body = await readBody(request, createSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const provider = providerId(body.provider, "provider");
    const parsed = await parseCredentialInput(
      { key: body.key, configurations: configurationsOf(body) },
      ctx.services.trustedHosts,
    );
    const credentials = await sealCredentials(ctx.services.stores.secrets, provider, parsed.settings, parsed.secrets);
    const records = ctx.services.stores.records;
    const workspaceId = workspaceScope(principal, body.workspace_id);
    const created = await virtualKeyStore(records).create(principal.organisationId, {
      slug: body.slug ?? slugFrom(body.name),
      name: body.name,
      note: body.note ?? undefined,
      status: "active",
      workspaceId,
      ...(workspaceId ? {} : { workspaceAccess: { global: false, workspaceIds: [] } }),
      credentials,
      createdBy: principal.userId ?? principal.keyId,
    });
    const view = await savedResourceChanged(
      ctx,
      { action: "create", resourceType: "virtual_key", after: created },
      presentVirtualKey,
    );
    return json(view, { status: 201 });
  },

  async listVirtualKeys(request, ctx) {
    const principal = ctx.principal!;
    const query = readListQuery(request);
    const workspaceId = workspaceScope(principal, query.workspace_id);
    const bound = boundWorkspace(principal);
    const page = await listPage(() =>
      virtualKeyStore(ctx.services.stores.records).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: (virtualKey) => {
          if (bound) return canUseProvider(principal, { kind: "virtual_key", resource: virtualKey });
          return !workspaceId || virtualKey.workspaceId === workspaceId;
        },
      }),
    );
    return listResponse(page, presentVirtualKey);
  },

  async getVirtualKey(_request, ctx) {
    return json(presentVirtualKey(await visibleVirtualKey(ctx)));
  },

  async updateVirtualKey(request, ctx) {
    const body = await readBody(request, updateSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const current = await visibleVirtualKey(ctx);
    assertWritable(ctx.principal!, current, "virtual keys");
    const changes: Partial<VirtualKeyResource> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.note !== undefined) changes.note = body.note ?? undefined;
    const configurations = configurationsOf(body);
    if (body.key !== undefined || configurations !== undefined) {
      const parsed = await parseCredentialInput({ key: body.key, configurations }, ctx.services.trustedHosts);
      changes.credentials = await updateCredentials(ctx.services.stores.secrets, current.credentials, parsed);
    }
    const records = ctx.services.stores.records;
    const updated = await virtualKeyStore(records).update(current, changes);
    const view = await savedResourceChanged(
      ctx,
      { action: "update", resourceType: "virtual_key", before: current, after: updated },
      presentVirtualKey,
    );
    return json(view);
  },

  async listVirtualKeyWorkspaces(_request, ctx) {
    const virtualKey = await visibleVirtualKey(ctx);
    return json(presentWorkspaceAccess("virtual-key.workspace", virtualKey.workspaceId, virtualKey.workspaceAccess));
  },

  async updateVirtualKeyWorkspaces(request, ctx) {
    requireAdmin(ctx.principal);
    const body = await readBody(request, workspaceAccessSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const current = await visibleVirtualKey(ctx);
    if (current.workspaceId) {
      throw forbidden(
        `Virtual key '${current.slug}' belongs to workspace '${current.workspaceId}' and cannot be shared.`,
        "workspace_virtual_key",
      );
    }
    const records = ctx.services.stores.records;
    const updated = await virtualKeyStore(records).update(current, {
      workspaceAccess: applyWorkspaceAccess(current.workspaceAccess, body),
    });
    await savedResourceChanged(
      ctx,
      { action: "update_workspaces", resourceType: "virtual_key", before: current, after: updated },
      presentVirtualKey,
    );
    return json(presentWorkspaceAccess("virtual-key.workspace", undefined, updated.workspaceAccess));
  },

  async deleteVirtualKey(_request, ctx) {
    const virtualKey = await visibleVirtualKey(ctx);
    assertWritable(ctx.principal!, virtualKey, "virtual keys");
    const records = ctx.services.stores.records;
    await virtualKeyStore(records).delete(virtualKey);
    await savedResourceChanged(
      ctx,
      { action: "delete", resourceType: "virtual_key", before: virtualKey },
      presentVirtualKey,
    );
    return json({ id: virtualKey.id, slug: virtualKey.slug, object: "virtual-key", deleted: true });
  },
};
