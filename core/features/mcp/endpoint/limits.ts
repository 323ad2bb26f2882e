import type { Principal } from "../../../auth/principal.ts";
import type { Services } from "../../../services.ts";
import type { McpTarget } from "./access.ts";

/**
 * Rate-limit and usage-limit policies on MCP tool calls (spec 8): each call counts as one request of provider
 * `mcp` and model = the server's slug, so policies can match all MCP calls, one server, or a key / user / workspace
 * as for inference. Throws the enforcer's 429 HttpError (naming the policy, with retry headers) when refused.
 * Tokens and cost policies only check their limit here (a tool call has neither); their reservations are released.
 */
export async function admitMcpToolCall(
  services: Services,
  principal: Principal,
  target: McpTarget,
  context: { waitUntil(work: Promise<unknown>): void; metadata?: Record<string, string> },
): Promise<void> {
  const admission = await services.policies.admit({
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId ?? target.server.workspaceId,
    apiKeyId: principal.keyId,
    userId: principal.userId,
    metadata: context.metadata,
    provider: "mcp",
    model: target.server.slug,
  });
  if (admission.background) context.waitUntil(admission.background);
  if (admission.needsUsage) context.waitUntil(admission.settle({}));
}
