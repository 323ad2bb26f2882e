import * as virtualKeys from "../../control/virtual-keys/service.ts";
import { virtualKeyCreateSchema, virtualKeyUpdateSchema } from "../../control/virtual-keys/schemas.ts";
import { workspaceAccessSchema } from "../../control/workspaces/access-schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps, credentialDeps } from "../control-deps.ts";
import { json, readBody } from "../../http/json.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";

/**
 * Legacy virtual keys (`/v1/virtual-keys`, Portkey's): parse, call core/control/virtual-keys/service.ts (an
 * alias over integrations), shape the answer.
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const ref = (ctx: RequestContext) => ({ slug: ctx.params.slug! });

export const handlers: HandlerMap = {
  async createVirtualKey(request, ctx) {
    const body = await readBody(request, virtualKeyCreateSchema, bodyLimit(ctx));
    return json(await virtualKeys.createVirtualKey(credentialDeps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listVirtualKeys(request, ctx) {
    return listResponse(await virtualKeys.listVirtualKeys(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },

  async getVirtualKey(_request, ctx) {
    return json(await virtualKeys.getVirtualKey(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  async updateVirtualKey(request, ctx) {
    const changes = () => readBody(request, virtualKeyUpdateSchema, bodyLimit(ctx));
    return json(await virtualKeys.updateVirtualKey(credentialDeps(ctx), ctx.principal!, { ...ref(ctx), changes }));
  },

  async listVirtualKeyWorkspaces(_request, ctx) {
    return json(await virtualKeys.listVirtualKeyWorkspaces(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  async updateVirtualKeyWorkspaces(request, ctx) {
    const access = () => readBody(request, workspaceAccessSchema, bodyLimit(ctx));
    const input = { ...ref(ctx), access };
    return json(await virtualKeys.updateVirtualKeyWorkspaces(controlDeps(ctx), ctx.principal!, input));
  },

  async deleteVirtualKey(_request, ctx) {
    const deleted = await virtualKeys.deleteVirtualKey(controlDeps(ctx), ctx.principal!, ref(ctx));
    return json({ ...deleted, object: "virtual-key", deleted: true });
  },
};
