import * as z from "zod";
import { listQuerySchema, listResponse } from "../../http/lists.ts";
import type { GuardrailPhase } from "../../control/organisation/store.ts";
import {
  defaultsUpdateSchema,
  exclusionsUpdateSchema,
  settingsUpdateSchema,
} from "../../control/organisation/schemas.ts";
import * as organisation from "../../control/organisation/service.ts";
import type { OrganisationDeps } from "../../control/organisation/service.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { notFound } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";

/**
 * Organisation settings and defaults (`/v1/admin/organisation/...`), workspace exclusions from the default
 * guardrails (`/v1/workspace-exclusions/...`) and the audit log (`/v1/audit-logs`): parse, call
 * core/control/organisation/service.ts, shape the answer.
 */

const deps = (ctx: RequestContext): OrganisationDeps => ({
  records: ctx.services.stores.records,
  traceId: ctx.traceId,
  blockInlineConfigForced: ctx.services.settings.BLOCK_INLINE_CONFIG,
  organisationChanged: (organisationId) => ctx.services.orgSettings.forget(organisationId),
});
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const searchParams = (request: Request) => Object.fromEntries(new URL(request.url).searchParams);

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

function exclusionsList(phase: GuardrailPhase, page: organisation.ExclusionsPage) {
  return {
    object: "list",
    type: phase,
    data: page.items,
    total: page.total,
    has_more: page.cursor !== undefined,
    next_cursor: page.cursor ?? null,
  };
}

export const handlers: HandlerMap = {
  async getOrganisationSettings(_request, ctx) {
    return json(await organisation.getOrganisationSettings(deps(ctx), ctx.principal!));
  },

  async updateOrganisationSettings(request, ctx) {
    const body = () => readBody(request, settingsUpdateSchema, bodyLimit(ctx));
    return json(await organisation.updateOrganisationSettings(deps(ctx), ctx.principal!, body));
  },

  async getOrganisationDefaults(_request, ctx) {
    return json(await organisation.getOrganisationDefaults(deps(ctx), ctx.principal!));
  },

  async updateOrganisationDefaults(request, ctx) {
    const body = () => readBody(request, defaultsUpdateSchema, bodyLimit(ctx));
    return json(await organisation.updateOrganisationDefaults(deps(ctx), ctx.principal!, body));
  },

  async listWorkspaceExclusions(request, ctx) {
    const phase = phaseOf(request);
    const query = async () => {
      const parsed = validate(listQuerySchema, searchParams(request));
      return { limit: parsed.limit, cursor: parsed.cursor ?? parsed.after };
    };
    const page = await organisation.listWorkspaceExclusions(deps(ctx), ctx.principal!, { phase, query });
    return json({ ...(await listResponse(page).json()), type: phase });
  },

  async updateWorkspaceExclusions(request, ctx) {
    const phase = phaseOf(request);
    const changes = () => readBody(request, exclusionsUpdateSchema, bodyLimit(ctx));
    const page = await organisation.updateWorkspaceExclusions(deps(ctx), ctx.principal!, { phase, changes });
    return json(exclusionsList(phase, page));
  },

  async listAuditLogs(request, ctx) {
    const query = async (): Promise<organisation.AuditLogQuery> => {
      const parsed = validate(auditQuerySchema, searchParams(request));
      return {
        limit: parsed.limit,
        cursor: parsed.cursor ?? parsed.after,
        resourceType: parsed.resource_type,
        resourceId: parsed.resource_id,
        action: parsed.action,
        workspaceId: parsed.workspace_id,
        actorKeyId: parsed.actor_key_id ?? parsed.api_key_id,
        actorUserId: parsed.actor_user_id ?? parsed.user_id,
        from: parsed.from,
        to: parsed.to,
      };
    };
    return listResponse(await organisation.listAuditLogs(deps(ctx), ctx.principal!, query));
  },
};
