import type { Principal } from "../../auth/principal.ts";
import type { Page } from "../../store/ports.ts";
import type { ControlDeps } from "../deps.ts";
import type { IntegrationResource } from "../integrations/store.ts";
import * as integrations from "../integrations/service.ts";
import type { IntegrationDeps, SavedProviderFace } from "../integrations/service.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import type { PageRequest } from "../paging.ts";
import { isoTime, presentCredentials, slugFrom } from "../credentials/credentials.ts";
import type { ConfigurationsInput } from "../credentials/schemas.ts";
import type { VirtualKeyCreateInput, VirtualKeyFlatInput, VirtualKeyUpdateInput } from "./schemas.ts";
import type { WorkspaceAccessBody } from "../workspaces/access-schemas.ts";

/**
 * Legacy virtual keys (Portkey's /virtual-keys): an alias over integrations. A virtual key IS an integration
 * record (core/control/integrations/store.ts, which also migrates virtual keys stored before); these functions only
 * translate the legacy shape (`provider`, `key`, flat Azure fields, `custom_host`, a slug made from the name)
 * to and from the integration service. So a virtual key is usable as `x-gateway-virtual-key: <slug>`, a
 * config target's `virtual_key`, or `@slug`, and is listed by `/v1/integrations` too.
 */

export type VirtualKeyView = ReturnType<typeof presentVirtualKey>;

export function presentVirtualKey(integration: IntegrationResource) {
  const credentials = presentCredentials(integration.credentials);
  return {
    id: integration.id,
    object: "virtual-key",
    slug: integration.slug,
    name: integration.name,
    ai_provider_name: integration.credentials.provider,
    provider: integration.credentials.provider,
    note: integration.note ?? null,
    status: "active",
    organisation_id: integration.organisationId,
    workspace_id: integration.workspaceId ?? null,
    global_workspace_access: integration.workspaceId ? null : { enabled: integration.workspaceAccess.global },
    masked_api_key: credentials.masked_api_key,
    model_config: credentials.configurations,
    version: integration.version,
    created_at: isoTime(integration.createdAt),
    last_updated_at: isoTime(integration.updatedAt),
  };
}

export const VIRTUAL_KEYS: SavedProviderFace<VirtualKeyView> = {
  resourceType: "virtual_key",
  noun: "virtual key",
  idPrefix: "vk",
  providerParam: "provider",
  workspaceObject: "virtual-key.workspace",
  workspaceList: "owned",
  present: presentVirtualKey,
};

/** The legacy places of provider settings, as integration `configurations` (flat fields win). */
function configurationsOf(body: VirtualKeyFlatInput): ConfigurationsInput | undefined {
  const merged: Record<string, unknown> = { ...(body.model_config ?? {}), ...(body.configurations ?? {}) };
  const flat = {
    resource_name: body.resource_name ?? body.resourceName,
    deployment_name: body.deployment_name ?? body.deploymentName,
    api_version: body.api_version ?? body.apiVersion,
    custom_host: body.custom_host,
  };
  for (const [name, value] of Object.entries(flat)) if (value !== undefined) merged[name] = value;
  return Object.keys(merged).length > 0 ? (merged as ConfigurationsInput) : undefined;
}

const slugRef = (slug: string) => ({ integration: slug });

/** Creates the integration a virtual key stands for; without a slug one is made from the name. */
export function createVirtualKey(
  deps: IntegrationDeps,
  principal: Principal,
  input: VirtualKeyCreateInput,
): Promise<VirtualKeyView> {
  const integration = {
    name: input.name,
    slug: input.slug ?? slugFrom(input.name),
    provider: input.provider,
    key: input.key,
    note: input.note ?? undefined,
    workspace_id: input.workspace_id,
    configurations: configurationsOf(input),
  };
  return integrations.createIntegration(deps, principal, integration, VIRTUAL_KEYS);
}

export function listVirtualKeys(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string },
): Promise<Page<VirtualKeyView>> {
  return integrations.listIntegrations(deps, principal, input, VIRTUAL_KEYS);
}

export function getVirtualKey(deps: ControlDeps, principal: Principal, input: { slug: string }) {
  return integrations.getIntegration(deps, principal, slugRef(input.slug), VIRTUAL_KEYS);
}

export function updateVirtualKey(
  deps: IntegrationDeps,
  principal: Principal,
  input: { slug: string; changes: Lazy<VirtualKeyUpdateInput> },
): Promise<VirtualKeyView> {
  const changes = async () => {
    const body = await resolveLazy(input.changes);
    return { name: body.name, key: body.key, note: body.note, configurations: configurationsOf(body) };
  };
  return integrations.updateIntegration(deps, principal, { ...slugRef(input.slug), changes }, VIRTUAL_KEYS);
}

export function deleteVirtualKey(deps: ControlDeps, principal: Principal, input: { slug: string }) {
  return integrations.deleteIntegration(deps, principal, slugRef(input.slug), VIRTUAL_KEYS);
}

export function listVirtualKeyWorkspaces(deps: ControlDeps, principal: Principal, input: { slug: string }) {
  return integrations.listIntegrationWorkspaces(deps, principal, slugRef(input.slug), VIRTUAL_KEYS);
}

export function updateVirtualKeyWorkspaces(
  deps: ControlDeps,
  principal: Principal,
  input: { slug: string; access: Lazy<WorkspaceAccessBody> },
) {
  const ref = { ...slugRef(input.slug), access: input.access };
  return integrations.updateIntegrationWorkspaces(deps, principal, ref, VIRTUAL_KEYS);
}
