import * as deployments from "../../control/deployments/service.ts";
import type { DeploymentDeps } from "../../control/deployments/service.ts";
import { deploymentCreateSchema, heartbeatSchema } from "../../control/deployments/schemas.ts";
import { controlDeps } from "../control-deps.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { json, readBody } from "../../http/json.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";

/**
 * Self-hosted gateway deployments (`/v1/deployments`): parse, call core/control/deployments/service.ts, shape.
 * The portkey-ai SDK has no methods for them, so the paths follow the gateway's other admin resources.
 */

const deps = (ctx: RequestContext): DeploymentDeps => ({
  ...controlDeps(ctx),
  forgetKey: (secretHash) => ctx.services.apiKeys.forget(secretHash),
});
const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;

export const handlers: HandlerMap = {
  async registerDeployment(request, ctx) {
    const body = () => readBody(request, deploymentCreateSchema, bodyLimit(ctx));
    return json(await deployments.registerDeployment(deps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listDeployments(request, ctx) {
    const query = readListQuery(request);
    return listResponse(
      await deployments.listDeployments(deps(ctx), ctx.principal!, { limit: query.limit, cursor: query.cursor }),
    );
  },

  async getDeployment(_request, ctx) {
    return json(await deployments.getDeployment(deps(ctx), ctx.principal!, ctx.params.id!));
  },

  async deploymentHeartbeat(request, ctx) {
    const beat = () => readBody(request, heartbeatSchema, bodyLimit(ctx));
    return json(await deployments.recordHeartbeat(deps(ctx), ctx.principal!, { id: ctx.params.id!, beat }));
  },

  async deleteDeployment(_request, ctx) {
    return json(await deployments.deleteDeployment(deps(ctx), ctx.principal!, ctx.params.id!));
  },
};
