import * as z from "zod";
import { INTEGRATIONS } from "../../control/integrations/service.ts";
import * as integrations from "../../control/integrations/service.ts";
import {
  integrationCreateSchema,
  integrationModelsSchema,
  integrationUpdateSchema,
} from "../../control/integrations/schemas.ts";
import { workspaceAccessSchema } from "../../control/workspaces/access-schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps, credentialDeps } from "../control-deps.ts";
import { json, readBody, validate } from "../../http/json.ts";
import { listQuerySchema, listResponse } from "../../http/lists.ts";

/**
 * Integrations (`/v1/integrations`, Portkey's saved AI providers), their workspace access and models: parse,
 * call core/control/integrations/service.ts, shape the answer.
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const ref = (ctx: RequestContext) => ({ integration: ctx.params.id! });

const listSchema = listQuerySchema.extend({ type: z.enum(["workspace", "organisation", "all"]).optional() });

export const handlers: HandlerMap = {
  async createIntegration(request, ctx) {
    const body = await readBody(request, integrationCreateSchema, bodyLimit(ctx));
    const { ai_provider_id, configuration, ...rest } = body;
    const input = {
      ...rest,
      provider: ai_provider_id,
      configurations: body.configurations ?? configuration,
      configurationsParam: body.configurations ? "configurations" : "configuration",
    };
    return json(await integrations.createIntegration(credentialDeps(ctx), ctx.principal!, input, INTEGRATIONS), {
      status: 201,
    });
  },

  async listIntegrations(request, ctx) {
    const query = validate(listSchema, Object.fromEntries(new URL(request.url).searchParams));
    const input = { ...query, cursor: query.cursor ?? query.after };
    return listResponse(await integrations.listIntegrations(controlDeps(ctx), ctx.principal!, input, INTEGRATIONS));
  },

  async getIntegration(_request, ctx) {
    return json(await integrations.getIntegration(controlDeps(ctx), ctx.principal!, ref(ctx), INTEGRATIONS));
  },

  async updateIntegration(request, ctx) {
    const changes = async () => {
      const { configuration, ...body } = await readBody(request, integrationUpdateSchema, bodyLimit(ctx));
      const configurationsParam = body.configurations ? "configurations" : "configuration";
      return { ...body, configurations: body.configurations ?? configuration, configurationsParam };
    };
    const input = { ...ref(ctx), changes };
    return json(await integrations.updateIntegration(credentialDeps(ctx), ctx.principal!, input, INTEGRATIONS));
  },

  async deleteIntegration(_request, ctx) {
    const deleted = await integrations.deleteIntegration(controlDeps(ctx), ctx.principal!, ref(ctx), INTEGRATIONS);
    return json({ ...deleted, object: "integration", deleted: true });
  },

  async listIntegrationWorkspaces(_request, ctx) {
    return json(await integrations.listIntegrationWorkspaces(controlDeps(ctx), ctx.principal!, ref(ctx), INTEGRATIONS));
  },

  async updateIntegrationWorkspaces(request, ctx) {
    const access = () => readBody(request, workspaceAccessSchema, bodyLimit(ctx));
    const input = { ...ref(ctx), access };
    return json(await integrations.updateIntegrationWorkspaces(controlDeps(ctx), ctx.principal!, input, INTEGRATIONS));
  },

  async listIntegrationModels(_request, ctx) {
    return json(await integrations.listIntegrationModels(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  /** `PUT .../models` and `PUT .../integration-models`. */
  async updateIntegrationModels(request, ctx) {
    const models = () => readBody(request, integrationModelsSchema, bodyLimit(ctx));
    const input = { ...ref(ctx), models };
    return json(await integrations.updateIntegrationModels(controlDeps(ctx), ctx.principal!, input));
  },

  async deleteIntegrationModels(request, ctx) {
    const slugs = (new URL(request.url).searchParams.get("slugs") ?? "")
      .split(",")
      .map((slug) => slug.trim())
      .filter(Boolean);
    const input = { ...ref(ctx), slugs };
    return json(await integrations.deleteIntegrationModels(controlDeps(ctx), ctx.principal!, input));
  },
};
