import type { AgentDeps } from "../../features/agents/service.ts";
import * as agents from "../../features/agents/service.ts";
import {
  agentIntegrationCreateSchema,
  agentIntegrationUpdateSchema,
  fetchAgentCardSchema,
} from "../../features/agents/schemas.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps } from "../control-deps.ts";
import { json, readBody } from "../../http/json.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";

/**
 * The agents gateway: agent integrations (`/v2/agent-integrations`, core/features/agents/service.ts) and the
 * gateway's own A2A endpoints (`/v1/agents/:agent`, core/features/agents/invocation.ts, loaded on first use with the SDK).
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const ref = (ctx: RequestContext) => ({ id: ctx.params.id! });

const agentDeps = (ctx: RequestContext): AgentDeps => ({
  ...controlDeps(ctx),
  secrets: ctx.services.stores.secrets,
  trustedHosts: ctx.services.trustedHosts,
  cardTimeoutMs: ctx.services.settings.AGENT_CARD_FETCH_TIMEOUT_MS,
});

const invocation = () => import("../../features/agents/invocation.ts");

export const handlers: HandlerMap = {
  async createAgentIntegration(request, ctx) {
    const body = await readBody(request, agentIntegrationCreateSchema, bodyLimit(ctx));
    return json(await agents.createAgentIntegration(agentDeps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listAgentIntegrations(request, ctx) {
    return listResponse(await agents.listAgentIntegrations(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },

  async getAgentIntegration(_request, ctx) {
    return json(await agents.getAgentIntegration(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  async updateAgentIntegration(request, ctx) {
    const changes = () => readBody(request, agentIntegrationUpdateSchema, bodyLimit(ctx));
    return json(await agents.updateAgentIntegration(agentDeps(ctx), ctx.principal!, { ...ref(ctx), changes }));
  },

  async deleteAgentIntegration(_request, ctx) {
    return json(await agents.deleteAgentIntegration(controlDeps(ctx), ctx.principal!, ref(ctx)));
  },

  /** Spec 4.8: the card at a URL, fetched under the SSRF rules and checked; nothing is stored. */
  async fetchAgentCard(request, ctx) {
    const body = await readBody(request, fetchAgentCardSchema, bodyLimit(ctx));
    const { card, cardUrl } = await agents.fetchCard(agentDeps(ctx), body);
    return json({ object: "agent_card", card_url: cardUrl, agent_card: card });
  },

  async agentCard(request, ctx) {
    return (await invocation()).serveAgentCard(request, ctx);
  },

  async invokeAgent(request, ctx) {
    return (await invocation()).invokeAgent(request, ctx);
  },
};
