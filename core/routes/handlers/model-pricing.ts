import * as z from "zod";
import * as pricing from "../../control/model-pricing/service.ts";
import { modelPricingCreateSchema, modelPricingUpdateSchema } from "../../control/model-pricing/schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps } from "../control-deps.ts";
import { json, readBody, validate } from "../../http/json.ts";
import { listQuerySchema, listResponse } from "../../http/lists.ts";

/** Model pricing overrides and custom models (`/v1/model-pricing`): parse, call the service, shape the answer. */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const ref = (ctx: RequestContext) => ({ id: ctx.params.id! });

const listSchema = listQuerySchema.extend({
  provider: z.string().optional(),
  model: z.string().optional(),
  integration_id: z.string().optional(),
});

export const handlers: HandlerMap = {
  async createModelPricing(request, ctx) {
    const body = await readBody(request, modelPricingCreateSchema, bodyLimit(ctx));
    return json(await pricing.createModelPricing(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listModelPricing(request, ctx) {
    const query = validate(listSchema, Object.fromEntries(new URL(request.url).searchParams));
    const input = { ...query, cursor: query.cursor ?? query.after };
    return listResponse(await pricing.listModelPricing(controlDeps(ctx), ctx.principal!, input));
  },

  async getModelPricing(_request, ctx) {
    return json(await pricing.getModelPricing(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  async updateModelPricing(request, ctx) {
    const changes = () => readBody(request, modelPricingUpdateSchema, bodyLimit(ctx));
    return json(await pricing.updateModelPricing(controlDeps(ctx), ctx.principal!, { ...ref(ctx), changes }));
  },

  async deleteModelPricing(_request, ctx) {
    return json(await pricing.deleteModelPricing(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },
};
