import * as z from "zod";
import { requireAdmin } from "../../auth/scopes.ts";
import { writeAudit } from "../../control/audit.ts";
import { listQuerySchema, listResponse } from "../../control/list-query.ts";
import {
  type GuardrailPhase,
  type OrganisationRecord,
  getOrganisation,
  presentDefaults,
  presentSettings,
  resolveGuardrailRefs,
  updateOrganisation,
} from "../../control/organisation.ts";
import {
  defaultsUpdateSchema,
  exclusionsUpdateSchema,
  settingsUpdateSchema,
} from "../../control/organisation-schemas.ts";
import { workspaceStore } from "../../control/workspaces.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";
import type { RecordItem } from "../../store/ports.ts";

/**
 * Organisation settings and defaults (`/v1/admin/organisation/...`), workspace exclusions from the default
 * guardrails (`/v1/workspace-exclusions/...`) and the audit log (`/v1/audit-logs`). Admin only (spec 5.5).
 */

const records = (ctx: RequestContext) => ctx.services.stores.records;
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

async function loadOrganisation(ctx: RequestContext): Promise<OrganisationRecord> {
  const principal = requireAdmin(ctx.principal);
  return getOrganisation(records(ctx), principal.organisationId);
}

const PHASES: Record<string, GuardrailPhase> = {
  "input-guardrails": "input_guardrails",
  "output-guardrails": "output_guardrails",
};

/** `/v1/workspace-exclusions/input-guardrails` -> `input_guardrails`. */
const phaseOf = (request: Request): GuardrailPhase => {
  const last = new URL(request.url).pathname.replace(/\/+$/, "").split("/").pop() ?? "";
  const phase = PHASES[last];
  if (!phase) throw notFound(`Unknown exclusion list '${last}'; use input-guardrails or output-guardrails.`);
  return phase;
};

function offsetCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  const text = Buffer.from(cursor, "base64url").toString("utf8");
  const match = /^offset:(\d{1,7})$/.exec(text);
  if (!match) throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
  return Number(match[1]);
}

async function presentExclusions(
  ctx: RequestContext,
  organisation: OrganisationRecord,
  phase: GuardrailPhase,
  limit: number,
  cursor?: string,
) {
  const ids = organisation.exclusions?.[phase] ?? [];
  const start = offsetCursor(cursor);
  const slice = ids.slice(start, start + limit);
  const store = workspaceStore(records(ctx));
  const data = await Promise.all(
    slice.map(async (id) => {
      const workspace = await store.get(organisation.id, id);
      return {
        object: "workspace_exclusion",
        id,
        workspace_id: id,
        slug: workspace?.slug ?? null,
        name: workspace?.name ?? null,
      };
    }),
  );
  const next = start + limit < ids.length ? Buffer.from(`offset:${start + limit}`).toString("base64url") : undefined;
  return { items: data, cursor: next, total: ids.length };
}

const auditQuerySchema = listQuerySchema.extend({
  resource_type: z.string().max(100).optional(),
  resource_id: z.string().max(300).optional(),
  action: z.string().max(100).optional(),
  actor_key_id: z.string().max(200).optional(),
  api_key_id: z.string().max(200).optional(),
  actor_user_id: z.string().max(200).optional(),
  user_id: z.string().max(200).optional(),
  from: z.iso.datetime({ offset: true }).optional(),
  to: z.iso.datetime({ offset: true }).optional(),
});

function presentAudit(item: RecordItem) {
  const actor = (item.actor ?? {}) as { keyId?: string; userId?: string; email?: string; kind?: string };
  return {
    object: "audit_log",
    id: item.id,
    created_at: item.createdAt,
    action: item.action,
    resource_type: item.resourceType,
    resource_id: item.resourceId,
    workspace_id: item.workspaceId ?? null,
    actor: {
      type: actor.kind ?? null,
      api_key_id: actor.keyId ?? null,
      user_id: actor.userId ?? null,
      email: actor.email ?? null,
    },
    before: item.before ?? null,
    after: item.after ?? null,
    trace_id: item.traceId ?? null,
  };
}

export const handlers: HandlerMap = {
  async getOrganisationSettings(_request, ctx) {
    const organisation = await loadOrganisation(ctx);
    return json(presentSettings(organisation, ctx.services.settings.BLOCK_INLINE_CONFIG));
  },

  async updateOrganisationSettings(request, ctx) {
    const current = await loadOrganisation(ctx);
    const body = await readBody(request, settingsUpdateSchema, bodyLimit(ctx));
    const settings = { ...current.settings };
    for (const [field, value] of Object.entries(body)) {
      if (value === undefined) continue;
      if (value === null) delete settings[field as keyof typeof settings];
      else (settings as Record<string, unknown>)[field] = value;
    }
    const updated = await updateOrganisation(records(ctx), current, { settings });
    ctx.services.orgSettings.forget(current.id);
    const forced = ctx.services.settings.BLOCK_INLINE_CONFIG;
    const after = presentSettings(updated, forced);
    await writeAudit(ctx, {
      action: "update",
      resourceType: "organisation_settings",
      resourceId: current.id,
      before: presentSettings(current, forced),
      after,
    });
    return json(after);
  },

  async getOrganisationDefaults(_request, ctx) {
    return json(presentDefaults(await loadOrganisation(ctx)));
  },

  async updateOrganisationDefaults(request, ctx) {
    const current = await loadOrganisation(ctx);
    const body = await readBody(request, defaultsUpdateSchema, bodyLimit(ctx));
    const defaults = { ...current.defaults };
    for (const phase of ["input_guardrails", "output_guardrails"] as const) {
      const refs = body[phase];
      if (refs !== undefined) defaults[phase] = await resolveGuardrailRefs(records(ctx), current.id, refs);
    }
    const updated = await updateOrganisation(records(ctx), current, { defaults });
    const after = presentDefaults(updated);
    await writeAudit(ctx, {
      action: "update",
      resourceType: "organisation_defaults",
      resourceId: current.id,
      before: presentDefaults(current),
      after,
    });
    return json(after);
  },

  async listWorkspaceExclusions(request, ctx) {
    const phase = phaseOf(request);
    const organisation = await loadOrganisation(ctx);
    const query = validate(listQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    const page = await presentExclusions(ctx, organisation, phase, query.limit, query.cursor ?? query.after);
    const response = listResponse(page);
    const body = { ...(await response.json()), type: phase, total: page.total };
    return json(body);
  },

  async updateWorkspaceExclusions(request, ctx) {
    const phase = phaseOf(request);
    const current = await loadOrganisation(ctx);
    const body = await readBody(request, exclusionsUpdateSchema, bodyLimit(ctx));
    const param = body.workspace_ids !== undefined ? "workspace_ids" : "workspaces";
    const requested = body.workspace_ids ?? body.workspaces ?? [];
    const store = workspaceStore(records(ctx));
    const ids: string[] = [];
    for (const [index, ref] of requested.entries()) {
      const workspace = await store.get(current.id, ref);
      if (!workspace) throw badRequest(`No workspace '${ref}'.`, `${param}[${index}]`, "workspace_not_found");
      if (!ids.includes(workspace.id)) ids.push(workspace.id);
    }
    const before = current.exclusions?.[phase] ?? [];
    const next = body.override_existing ? ids : [...before, ...ids.filter((id) => !before.includes(id))];
    const updated = await updateOrganisation(records(ctx), current, {
      exclusions: { ...current.exclusions, [phase]: next },
    });
    await writeAudit(ctx, {
      action: "update",
      resourceType: "workspace_exclusions",
      resourceId: `${current.id}/${phase}`,
      before: { workspace_ids: before },
      after: { workspace_ids: next, override_existing: body.override_existing },
    });
    const page = await presentExclusions(ctx, updated, phase, 100);
    return json({
      object: "list",
      type: phase,
      data: page.items,
      total: page.total,
      has_more: page.cursor !== undefined,
      next_cursor: page.cursor ?? null,
    });
  },

  async listAuditLogs(request, ctx) {
    const principal = requireAdmin(ctx.principal);
    const query = validate(auditQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    const cursor = query.cursor ?? query.after;
    let after: string | undefined;
    if (cursor) {
      const text = Buffer.from(cursor, "base64url").toString("utf8");
      if (!text.startsWith("after:") || text.length < 8)
        throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
      after = text.slice(6);
    }
    const lower = query.from ? new Date(query.from).toISOString() : "0";
    const upperTime = query.to ? `${new Date(query.to).toISOString()}#\uffff` : "\uffff";
    const upper = after && after < upperTime ? after : upperTime;
    const keyId = query.actor_key_id ?? query.api_key_id;
    const userId = query.actor_user_id ?? query.user_id;
    const matches = (item: RecordItem) => {
      const actor = (item.actor ?? {}) as { keyId?: string; userId?: string };
      return (
        (!query.resource_type || item.resourceType === query.resource_type) &&
        (!query.resource_id || item.resourceId === query.resource_id) &&
        (!query.action || item.action === query.action) &&
        (!query.workspace_id || item.workspaceId === query.workspace_id) &&
        (!keyId || actor.keyId === keyId) &&
        (!userId || actor.userId === userId)
      );
    };
    const items: RecordItem[] = [];
    let next: string | undefined;
    let storeCursor: string | undefined;
    outer: do {
      const page = await ctx.services.stores.records.query({
        partition: `ORG#${principal.organisationId}#AUDIT`,
        index: "gsi1",
        order: "desc",
        from: lower,
        to: upper,
        limit: Math.min(1000, Math.max(query.limit + 1, 50)),
        cursor: storeCursor,
      });
      for (const item of page.items) {
        if (after && String(item.gsi1sk) >= after) continue;
        if (!matches(item)) continue;
        if (items.length === query.limit) {
          next = Buffer.from(`after:${String(items.at(-1)!.gsi1sk)}`).toString("base64url");
          break outer;
        }
        items.push(item);
      }
      storeCursor = page.cursor;
    } while (storeCursor);
    return listResponse({ items: items.map(presentAudit), cursor: next });
  },
};
