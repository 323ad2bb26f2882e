import type { Principal } from "../../auth/principal.ts";
import { isOrganisationWide, workspaceScope } from "../../auth/scopes.ts";
import { type ControlDeps, changed } from "../../control/deps.ts";
import { Forbidden, Invalid, NotFound } from "../../control/errors.ts";
import { type Lazy, resolveLazy } from "../../control/lazy.ts";
import { type PageRequest, readPage } from "../../control/paging.ts";
import { assertWritable, boundWorkspace, isoTime } from "../../control/credentials/credentials.ts";
import { type SealedValue, hintOf, looksMasked, openValue, sealValue } from "../../control/sealed-values.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
import type { Page, Secrets } from "../../store/ports.ts";
import { fetchAgentCard } from "./card-fetch.ts";
import { type AgentIntegration, agentIntegrationStore, agentOpenTo } from "./records.ts";
import type { AgentIntegrationCreateInput, AgentIntegrationUpdateInput, FetchAgentCardInput } from "./schemas.ts";

/**
 * Agent integrations (`/v2/agent-integrations`): register an A2A agent by URL (its card is fetched and checked),
 * with the headers the gateway sends it (sealed; views show hints). Ownership as for other saved resources: a
 * workspace key's (or `workspace_id`) belongs to that workspace; an organisation-wide caller's without
 * `workspace_id` to the organisation, opened to workspaces through `workspaces` / `global_workspace_access`.
 * Workspace-bound callers see their own and those opened to them, and change only their own.
 */

export interface AgentDeps extends ControlDeps {
  secrets: Secrets;
  trustedHosts: TrustedHosts;
  /** Timeout of an agent card fetch. */
  cardTimeoutMs: number;
}

export function presentAgentIntegration(agent: AgentIntegration) {
  return {
    id: agent.id,
    object: "agent_integration",
    slug: agent.slug,
    name: agent.name,
    description: agent.description ?? null,
    url: agent.url,
    card_url: agent.card_url,
    agent_card: agent.agent_card,
    card_fetched_at: isoTime(agent.card_fetched_at),
    auth_type: agent.auth_type,
    headers: agent.headers
      ? Object.fromEntries(Object.entries(agent.headers).map(([name, value]) => [name, hintOf(value)]))
      : {},
    workspace_id: agent.workspaceId ?? null,
    workspaces: agent.workspaceId ? [] : agent.workspaces,
    global_workspace_access: !agent.workspaceId && agent.global_workspace_access,
    invoke_path: `/v1/agents/${agent.slug}`,
    created_at: isoTime(agent.createdAt),
    last_updated_at: isoTime(agent.updatedAt),
  };
}

export type AgentIntegrationView = ReturnType<typeof presentAgentIntegration>;

/** Audit entries keep the view without the (up to 1 MB) card. */
function auditView(agent: AgentIntegration) {
  const { agent_card, ...view } = presentAgentIntegration(agent);
  return { ...view, agent_card_name: agent.agent_card.name };
}

const notFound = (ref: string) =>
  new NotFound(`No agent integration '${ref}'.`, { code: "agent_integration_not_found" });

/** May this caller see (and invoke) the agent? Organisation-wide callers: every agent of the organisation. */
export function agentVisibleTo(principal: Principal, agent: AgentIntegration): boolean {
  const bound = boundWorkspace(principal);
  return !bound || agentOpenTo(agent, bound);
}

/** By id or slug; NotFound when unknown or not visible to the caller (alike). */
export async function loadVisibleAgent(
  deps: Pick<ControlDeps, "records">,
  principal: Principal,
  ref: string,
): Promise<AgentIntegration> {
  const agent = await agentIntegrationStore(deps.records).get(principal.organisationId, ref);
  if (!agent || !agentVisibleTo(principal, agent)) throw notFound(ref);
  return agent;
}

async function loadWritable(deps: ControlDeps, principal: Principal, ref: string) {
  const agent = await loadVisibleAgent(deps, principal, ref);
  assertWritable(principal, agent, "agent integrations");
  return agent;
}

async function sealHeaders(
  secrets: Secrets,
  given: Record<string, string>,
  stored: Record<string, SealedValue> | undefined,
): Promise<Record<string, SealedValue>> {
  const sealed: Record<string, SealedValue> = {};
  for (const [name, value] of Object.entries(given)) {
    const kept = stored?.[name];
    // A hint sent back keeps the stored value.
    sealed[name] = kept && looksMasked(value) ? kept : await sealValue(secrets, value);
  }
  return sealed;
}

function slugOf(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48);
  const suffix = Math.random().toString(16).slice(2, 8).padEnd(6, "0");
  return `${base || "agent"}-${suffix}`;
}

function checkAccessFields(
  workspaceId: string | undefined,
  input: { workspaces?: unknown; global_workspace_access?: boolean },
) {
  if (workspaceId && (input.workspaces !== undefined || input.global_workspace_access !== undefined))
    throw new Invalid("A workspace's agent integration cannot be opened to other workspaces.", {
      param: input.workspaces !== undefined ? "workspaces" : "global_workspace_access",
      code: "workspace_agent_integration",
    });
}

function checkAuthFields(authType: string, headers: Record<string, string> | undefined) {
  if (authType === "headers" && (!headers || Object.keys(headers).length === 0))
    throw new Invalid("`headers` auth needs at least one header.", { param: "headers" });
  if (authType === "none" && headers && Object.keys(headers).length > 0)
    throw new Invalid("`headers` are only used with `auth_type: headers`.", { param: "auth_type" });
}

/** Fetches a card with plain headers (the create and fetch-agent-card routes). */
export function fetchCard(deps: AgentDeps, input: FetchAgentCardInput) {
  return fetchAgentCard(input.url, {
    trustedHosts: deps.trustedHosts,
    timeoutMs: deps.cardTimeoutMs,
    headers: input.headers,
  });
}

export async function createAgentIntegration(
  deps: AgentDeps,
  principal: Principal,
  input: AgentIntegrationCreateInput,
): Promise<AgentIntegrationView> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  if (!workspaceId && !isOrganisationWide(principal))
    throw new Forbidden("Organisation agent integrations need an organisation-level key.", { code: "admin_required" });
  checkAccessFields(workspaceId, input);
  checkAuthFields(input.auth_type, input.headers);
  const headers = input.auth_type === "headers" ? input.headers : undefined;
  const { card, cardUrl } = await fetchCard(deps, { url: input.url, headers });
  const created = await agentIntegrationStore(deps.records).create(principal.organisationId, {
    slug: input.slug ?? slugOf(input.name),
    name: input.name,
    description: input.description ?? null,
    url: input.url,
    card_url: cardUrl,
    agent_card: card,
    card_fetched_at: Math.floor(Date.now() / 1000),
    auth_type: input.auth_type,
    ...(headers ? { headers: await sealHeaders(deps.secrets, headers, undefined) } : {}),
    workspaceId,
    workspaces: input.workspaces ?? [],
    global_workspace_access: input.global_workspace_access ?? false,
    createdBy: principal.userId ?? principal.keyId,
  });
  await changed(deps, principal, { action: "create", resourceType: "agent_integration", after: created }, auditView);
  return presentAgentIntegration(created);
}

export async function listAgentIntegrations(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string },
): Promise<Page<AgentIntegrationView>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const page = await readPage(() =>
    agentIntegrationStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (agent) => agentVisibleTo(principal, agent) && (!workspaceId || agentOpenTo(agent, workspaceId)),
    }),
  );
  return { items: page.items.map(presentAgentIntegration), cursor: page.cursor };
}

export async function getAgentIntegration(deps: ControlDeps, principal: Principal, input: { id: string }) {
  return presentAgentIntegration(await loadVisibleAgent(deps, principal, input.id));
}

/** `headers` replace the stored ones as a whole; a value sent back as its hint keeps the stored value. */
export async function updateAgentIntegration(
  deps: AgentDeps,
  principal: Principal,
  input: { id: string; changes: Lazy<AgentIntegrationUpdateInput> },
) {
  const current = await loadWritable(deps, principal, input.id);
  const body = await resolveLazy(input.changes);
  checkAccessFields(current.workspaceId, body);
  const changes: Partial<AgentIntegration> = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.slug !== undefined) changes.slug = body.slug;
  if (body.description !== undefined) changes.description = body.description;
  if (body.workspaces !== undefined) changes.workspaces = body.workspaces;
  if (body.global_workspace_access !== undefined) changes.global_workspace_access = body.global_workspace_access;
  const authType = body.auth_type ?? current.auth_type;
  if (body.auth_type !== undefined || body.headers !== undefined) {
    const given = authType === "headers" ? (body.headers ?? hintsOf(current.headers)) : body.headers;
    checkAuthFields(authType, given);
    changes.auth_type = authType;
    changes.headers = authType === "headers" ? await sealHeaders(deps.secrets, given!, current.headers) : undefined;
  }
  if (body.url !== undefined || body.refresh_card) {
    const url = body.url ?? current.url;
    const sealed = changes.headers ?? (authType === "headers" ? current.headers : undefined);
    const headers = sealed ? await openHeaders(deps.secrets, sealed) : undefined;
    const { card, cardUrl } = await fetchCard(deps, { url, headers });
    Object.assign(changes, {
      url,
      card_url: cardUrl,
      agent_card: card,
      card_fetched_at: Math.floor(Date.now() / 1000),
    });
  }
  const updated = await agentIntegrationStore(deps.records).update(current, changes);
  await changed(
    deps,
    principal,
    { action: "update", resourceType: "agent_integration", before: current, after: updated },
    auditView,
  );
  return presentAgentIntegration(updated);
}

const hintsOf = (headers: Record<string, SealedValue> | undefined) =>
  headers ? Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, hintOf(value)])) : undefined;

export async function deleteAgentIntegration(deps: ControlDeps, principal: Principal, input: { id: string }) {
  const current = await loadWritable(deps, principal, input.id);
  await agentIntegrationStore(deps.records).delete(current);
  await changed(deps, principal, { action: "delete", resourceType: "agent_integration", before: current }, auditView);
  return { id: current.id, slug: current.slug, object: "agent_integration", deleted: true };
}

/** The stored headers, opened (sent to the upstream agent only). */
export async function openHeaders(
  secrets: Secrets,
  sealed: Record<string, SealedValue>,
): Promise<Record<string, string>> {
  const opened: Record<string, string> = {};
  for (const [name, value] of Object.entries(sealed)) opened[name] = String(await openValue(secrets, value));
  return opened;
}
