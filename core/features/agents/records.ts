import { type Resource, ResourceStore } from "../../control/resource-store.ts";
import type { SealedValue } from "../../control/sealed-values.ts";
import type { Records } from "../../store/ports.ts";

/**
 * Agent integrations (AGENTINT, `agi_...`): an upstream A2A agent the gateway exposes as its own agent at
 * `/v1/agents/<slug>`. Organisation-wide (`workspaceId` unset; opened to workspaces through `workspaces` and
 * `global_workspace_access`) or owned by one workspace. The agent card is stored as fetched (validated:
 * core/features/agents/card-rules.ts); the headers the gateway sends upstream are sealed.
 */

export type AgentAuthType = "none" | "headers";

export interface AgentIntegration extends Resource {
  slug: string;
  name: string;
  description?: string | null;
  /** What the caller registered: the agent's base URL or its card's URL. */
  url: string;
  /** Where the card was found. */
  card_url: string;
  agent_card: Record<string, unknown>;
  card_fetched_at: number;
  auth_type: AgentAuthType;
  /** `headers` auth: header name -> sealed value. */
  headers?: Record<string, SealedValue>;
  workspaces: Array<{ id: string; enabled: boolean }>;
  global_workspace_access: boolean;
  createdBy?: string;
}

export const agentIntegrationStore = (records: Records) =>
  new ResourceStore<AgentIntegration>(records, "AGENTINT", "agi");

/** Whether callers bound to `workspaceId` may see and invoke the agent. */
export function agentOpenTo(agent: AgentIntegration, workspaceId: string): boolean {
  if (agent.workspaceId) return agent.workspaceId === workspaceId;
  const entry = agent.workspaces.find((workspace) => workspace.id === workspaceId);
  if (entry) return entry.enabled;
  return agent.global_workspace_access;
}
