import * as z from "zod";
import * as configs from "../../control/configs/service.ts";
import { configCreateSchema, configUpdateSchema } from "../../control/configs/schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps, credentialDeps } from "../control-deps.ts";
import { json, readBody, validate } from "../../http/json.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";

/**
 * Saved routing configs (`/v1/configs`) and their versions (`GET /v1/configs/:id?version=n`,
 * `GET /v1/configs/:id/versions`): parse, call core/control/configs/service.ts, shape the answer.
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const ref = (ctx: RequestContext) => ({ config: ctx.params.id! });
const versionSchema = z.coerce.number().int().min(1);

export const handlers: HandlerMap = {
  async createConfig(request, ctx) {
    const body = await readBody(request, configCreateSchema, bodyLimit(ctx));
    return json(await configs.createConfig(credentialDeps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listConfigs(request, ctx) {
    return listResponse(await configs.listConfigs(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },

  async getConfig(request, ctx) {
    const version = async () => {
      const value = new URL(request.url).searchParams.get("version");
      return value === null ? undefined : validate(versionSchema, value, "version");
    };
    return json(await configs.getConfig(controlDeps(ctx), ctx.principal!, { ...ref(ctx), version }));
  },

  async listConfigVersions(request, ctx) {
    const page = async () => readListQuery(request);
    return listResponse(await configs.listConfigVersions(controlDeps(ctx), ctx.principal!, { ...ref(ctx), page }));
  },

  async updateConfig(request, ctx) {
    const changes = () => readBody(request, configUpdateSchema, bodyLimit(ctx));
    return json(await configs.updateConfig(credentialDeps(ctx), ctx.principal!, { ...ref(ctx), changes }));
  },

  async deleteConfig(_request, ctx) {
    const { id } = await configs.deleteConfig(controlDeps(ctx), ctx.principal!, ref(ctx));
    return json({ id, object: "config", deleted: true });
  },
};
