import * as z from "zod";
import { requireAdmin, workspaceScope } from "../../auth/scopes.ts";
import { listPage, listQuerySchema, listResponse } from "../../control/list-query.ts";
import {
  assertWritable,
  boundWorkspace,
  isoTime,
  parseCredentialInput,
  presentCredentials,
  providerId,
  sealCredentials,
  updateCredentials,
} from "../../control/provider-credentials.ts";
import { configurationsSchema, slugSchema } from "../../control/provider-credentials-schemas.ts";
import {
  type IntegrationResource,
  type ModelEntry,
  canUseProvider,
  integrationStore,
  savedResourceChanged,
} from "../../control/saved-resources.ts";
import { applyWorkspaceAccess, presentWorkspaceAccess } from "../../control/workspace-access.ts";
import { workspaceAccessSchema } from "../../control/workspace-access-schemas.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { forbidden, notFound } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";

/**
 * Integrations (saved AI providers, Portkey's /integrations): a registry provider, its key and provider-specific
 * `configurations`, stored encrypted (core/control/provider-credentials.ts) and used as `@slug`.
 * Workspace access: an integration created for a workspace (`workspace_id`, or by a workspace key) serves only
 * that workspace; an organisation-level integration serves organisation keys and, like Portkey's workspace
 * provisioning (least privilege), NO workspace until `PUT /v1/integrations/:id/workspaces` enables some (or
 * `global_workspace_access.enabled`). Models: all allowed by default (`allow_all_models`); custom models and
 * per-model `custom_headers` through `PUT .../models` or `PUT .../integration-models`.
 */

const createSchema = z.strictObject({
  name: z.string().trim().min(1).max(255),
  slug: slugSchema,
  ai_provider_id: z.string().trim().min(1),
  key: z.string().min(1).max(16_384).optional(),
  description: z.string().max(2000).optional(),
  note: z.string().max(2000).optional(),
  workspace_id: z.string().min(1).optional(),
  configurations: configurationsSchema.optional(),
  configuration: configurationsSchema.optional(),
});

const updateSchema = z.strictObject({
  name: z.string().trim().min(1).max(255).optional(),
  slug: slugSchema.optional(),
  key: z.string().min(1).max(16_384).optional(),
  description: z.string().max(2000).optional(),
  note: z.string().max(2000).optional(),
  configurations: configurationsSchema.optional(),
  configuration: configurationsSchema.optional(),
});

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "connection",
  "transfer-encoding",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
]);
const customHeaders = z
  .record(
    z
      .string()
      .regex(HEADER_NAME, "not a valid header name")
      .refine((name) => !FORBIDDEN_HEADERS.has(name.toLowerCase()), "this header cannot be set"),
    z
      .string()
      .max(8192)
      .refine((value) => !/[\r\n\0]/.test(value), "header values cannot contain line breaks"),
  )
  .refine((value) => Object.keys(value).length <= 50, "at most 50 custom headers per model");

const modelSchema = z.looseObject({
  slug: z.string().trim().min(1).max(256),
  enabled: z.boolean().default(true),
  is_custom: z.boolean().optional(),
  custom_headers: customHeaders.optional(),
  name: z.string().max(256).optional(),
  base_model_slug: z.string().max(256).optional(),
});

const modelsSchema = z.strictObject({
  allow_all_models: z.boolean().optional(),
  models: z.array(modelSchema).max(1000).optional(),
});

export function presentIntegration(integration: IntegrationResource) {
  return {
    id: integration.id,
    object: "integration",
    slug: integration.slug,
    name: integration.name,
    ai_provider_id: integration.credentials.provider,
    description: integration.description ?? null,
    note: integration.note ?? null,
    organisation_id: integration.organisationId,
    workspace_id: integration.workspaceId ?? null,
    status: "active",
    ...presentCredentials(integration.credentials),
    global_workspace_access: integration.workspaceId ? null : { enabled: integration.workspaceAccess.global },
    allow_all_models: integration.models.allowAll,
    version: integration.version,
    created_at: isoTime(integration.createdAt),
    last_updated_at: isoTime(integration.updatedAt),
  };
}

function presentModel(slug: string, entry: ModelEntry) {
  return {
    slug,
    object: "integration.model",
    enabled: entry.enabled,
    is_custom: entry.isCustom,
    name: entry.name ?? null,
    base_model_slug: entry.baseModelSlug ?? null,
    custom_headers: entry.customHeaders ?? {},
  };
}

/** Reads an integration the caller may see (404 otherwise). */
async function visibleIntegration(ctx: RequestContext): Promise<IntegrationResource> {
  const principal = ctx.principal!;
  const idOrSlug = ctx.params.id!;
  const integration = await integrationStore(ctx.services.stores.records).get(principal.organisationId, idOrSlug);
  if (!integration || !canUseProvider(principal, { kind: "integration", resource: integration })) {
    throw notFound(`No integration '${idOrSlug}'.`, "integration_not_found");
  }
  return integration;
}

async function saveChange(
  ctx: RequestContext,
  current: IntegrationResource,
  changes: Partial<IntegrationResource>,
  action = "update",
) {
  const records = ctx.services.stores.records;
  const updated = await integrationStore(records).update(current, changes);
  await savedResourceChanged(
    ctx,
    { action, resourceType: "integration", before: current, after: updated },
    presentIntegration,
  );
  return updated;
}

function modelsView(integration: IntegrationResource) {
  const data = Object.entries(integration.models.entries).map(([slug, entry]) => presentModel(slug, entry));
  return { object: "list", allow_all_models: integration.models.allowAll, total: data.length, data };
}

function workspacesView(integration: IntegrationResource) {
  return presentWorkspaceAccess("integration.workspace", integration.workspaceId, integration.workspaceAccess);
}

const listSchema = listQuerySchema.extend({ type: z.enum(["workspace", "organisation", "all"]).optional() });

/** Handlers of the models routes, shared by `/models` and `/integration-models`. */
async function updateModels(request: Request, ctx: RequestContext): Promise<Response> {
  const body = await readBody(request, modelsSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const current = await visibleIntegration(ctx);
  assertWritable(ctx.principal!, current, "integrations");
  const entries = { ...current.models.entries };
  for (const model of body.models ?? []) {
    const previous = entries[model.slug];
    entries[model.slug] = {
      enabled: model.enabled,
      isCustom: model.is_custom ?? previous?.isCustom ?? false,
      ...(model.custom_headers !== undefined
        ? { customHeaders: model.custom_headers }
        : previous?.customHeaders
          ? { customHeaders: previous.customHeaders }
          : {}),
      ...(model.name !== undefined ? { name: model.name } : previous?.name ? { name: previous.name } : {}),
      ...(model.base_model_slug !== undefined
        ? { baseModelSlug: model.base_model_slug }
        : previous?.baseModelSlug
          ? { baseModelSlug: previous.baseModelSlug }
          : {}),
    };
  }
  const updated = await saveChange(
    ctx,
    current,
    { models: { allowAll: body.allow_all_models ?? current.models.allowAll, entries } },
    "update_models",
  );
  return json(modelsView(updated));
}

export const handlers: HandlerMap = {
  async createIntegration(request, ctx) {
    const principal = ctx.principal!;
    const body = await readBody(request, createSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const provider = providerId(body.ai_provider_id, "ai_provider_id");
    const parsed = await parseCredentialInput(
      { key: body.key, configurations: body.configurations ?? body.configuration },
      ctx.services.trustedHosts,
      body.configurations ? "configurations" : "configuration",
    );
    const credentials = await sealCredentials(ctx.services.stores.secrets, provider, parsed.settings, parsed.secrets);
    const records = ctx.services.stores.records;
    const created = await integrationStore(records).create(principal.organisationId, {
      slug: body.slug,
      name: body.name,
      description: body.description,
      note: body.note,
      workspaceId: workspaceScope(principal, body.workspace_id),
      credentials,
      workspaceAccess: { global: false, workspaceIds: [] },
      models: { allowAll: true, entries: {} },
      createdBy: principal.userId ?? principal.keyId,
    });
    const view = await savedResourceChanged(
      ctx,
      { action: "create", resourceType: "integration", after: created },
      presentIntegration,
    );
    return json(view, { status: 201 });
  },

  async listIntegrations(request, ctx) {
    const principal = ctx.principal!;
    const query = validate(listSchema, Object.fromEntries(new URL(request.url).searchParams));
    const workspaceId = workspaceScope(principal, query.workspace_id);
    const bound = boundWorkspace(principal);
    const page = await listPage(() =>
      integrationStore(ctx.services.stores.records).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor ?? query.after,
        filter: (integration) => {
          if (query.type === "workspace" && !integration.workspaceId) return false;
          if (query.type === "organisation" && integration.workspaceId) return false;
          if (bound) return canUseProvider(principal, { kind: "integration", resource: integration });
          if (!workspaceId) return true;
          return canUseProvider(
            { ...principal, keyType: "workspace", workspaceId },
            { kind: "integration", resource: integration },
          );
        },
      }),
    );
    return listResponse(page, presentIntegration);
  },

  async getIntegration(_request, ctx) {
    return json(presentIntegration(await visibleIntegration(ctx)));
  },

  async updateIntegration(request, ctx) {
    const body = await readBody(request, updateSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const current = await visibleIntegration(ctx);
    assertWritable(ctx.principal!, current, "integrations");
    const changes: Partial<IntegrationResource> = {};
    if (body.name !== undefined) changes.name = body.name;
    if (body.slug !== undefined) changes.slug = body.slug;
    if (body.description !== undefined) changes.description = body.description;
    if (body.note !== undefined) changes.note = body.note;
    const configurations = body.configurations ?? body.configuration;
    if (body.key !== undefined || configurations !== undefined) {
      const parsed = await parseCredentialInput(
        { key: body.key, configurations },
        ctx.services.trustedHosts,
        body.configurations ? "configurations" : "configuration",
      );
      changes.credentials = await updateCredentials(ctx.services.stores.secrets, current.credentials, parsed);
    }
    return json(presentIntegration(await saveChange(ctx, current, changes)));
  },

  async deleteIntegration(_request, ctx) {
    const principal = ctx.principal!;
    const integration = await visibleIntegration(ctx);
    assertWritable(principal, integration, "integrations");
    const records = ctx.services.stores.records;
    await integrationStore(records).delete(integration);
    await savedResourceChanged(
      ctx,
      { action: "delete", resourceType: "integration", before: integration },
      presentIntegration,
    );
    return json({ id: integration.id, slug: integration.slug, object: "integration", deleted: true });
  },

  async listIntegrationWorkspaces(_request, ctx) {
    return json(workspacesView(await visibleIntegration(ctx)));
  },

  async updateIntegrationWorkspaces(request, ctx) {
    requireAdmin(ctx.principal);
    const body = await readBody(request, workspaceAccessSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const current = await visibleIntegration(ctx);
    if (current.workspaceId) {
      throw forbidden(
        `Integration '${current.slug}' belongs to workspace '${current.workspaceId}' and cannot be shared.`,
        "workspace_integration",
      );
    }
    const updated = await saveChange(
      ctx,
      current,
      { workspaceAccess: applyWorkspaceAccess(current.workspaceAccess, body) },
      "update_workspaces",
    );
    return json(workspacesView(updated));
  },

  async listIntegrationModels(_request, ctx) {
    return json(modelsView(await visibleIntegration(ctx)));
  },

  updateIntegrationModels: updateModels,

  async deleteIntegrationModels(request, ctx) {
    const slugs = (new URL(request.url).searchParams.get("slugs") ?? "")
      .split(",")
      .map((slug) => slug.trim())
      .filter(Boolean);
    const current = await visibleIntegration(ctx);
    assertWritable(ctx.principal!, current, "integrations");
    const entries = { ...current.models.entries };
    for (const slug of slugs) delete entries[slug];
    const updated = await saveChange(ctx, current, { models: { ...current.models, entries } }, "update_models");
    return json(modelsView(updated));
  },
};
