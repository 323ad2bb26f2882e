import * as z from "zod";
import { providerCreateSchema, providerUpdateSchema } from "../../control/providers/schemas.ts";
import * as providers from "../../control/providers/service.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps } from "../control-deps.ts";
import { json, readBody, validate } from "../../http/json.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";

/** Providers (`/v1/providers`, the `portkey-ai` SDK's `providers.*`): parse, call core/control/providers/service.ts. */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const workspaceQuery = z.looseObject({ workspace_id: z.string().optional() });
const pageSizeQuery = z.looseObject({ page_size: z.coerce.number().int().min(1).max(100).optional() });
const workspaceOf = (request: Request) =>
  validate(workspaceQuery, Object.fromEntries(new URL(request.url).searchParams)).workspace_id;

export const handlers: HandlerMap = {
  async createProvider(request, ctx) {
    const body = await readBody(request, providerCreateSchema, bodyLimit(ctx));
    return json(await providers.createProvider(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listProviders(request, ctx) {
    const query = readListQuery(request);
    // The SDK pages with `page_size`: taken as the page's length.
    const pageSize = validate(pageSizeQuery, Object.fromEntries(new URL(request.url).searchParams)).page_size;
    const input = { ...query, limit: pageSize ?? query.limit };
    return listResponse(await providers.listProviders(controlDeps(ctx), ctx.principal!, input));
  },

  async getProvider(request, ctx) {
    return json(await providers.getProvider(controlDeps(ctx), ctx.principal!, ctx.params.id!, workspaceOf(request)));
  },

  async updateProvider(request, ctx) {
    const body = await readBody(request, providerUpdateSchema, bodyLimit(ctx));
    return json(await providers.updateProvider(controlDeps(ctx), ctx.principal!, ctx.params.id!, body));
  },

  async deleteProvider(request, ctx) {
    return json(await providers.deleteProvider(controlDeps(ctx), ctx.principal!, ctx.params.id!, workspaceOf(request)));
  },
};
