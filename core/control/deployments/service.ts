import { apiKeyStore, createApiKey, updateApiKeyLookup } from "../../auth/api-key-records.ts";
import type { Principal } from "../../auth/principal.ts";
import { requireScope } from "../../auth/scopes.ts";
import type { Page } from "../../store/ports.ts";
import { requireOrganisationAdmin } from "../access.ts";
import { type ControlDeps, audit } from "../deps.ts";
import type { DeploymentCreateInput, HeartbeatInput } from "./schemas.ts";
import { Conflict, NotFound } from "../errors.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import { readPage } from "../paging.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * Self-hosted gateway deployments (issue 28): an organisation admin registers one and gets its deployment key
 * once (an organisation service API key holding only `deployments.heartbeat`); the deployment posts
 * heartbeats with its version and health; lists show when each was last seen and a status derived from that
 * age. Deleting a deployment revokes its key. Registration and deletion are audited; heartbeats are not
 * (one a minute per deployment would drown the audit log), `last_seen_at` records them.
 */

export interface DeploymentResource extends Resource {
  name: string;
  /** The gateway version it runs (`version` is the record's own revision). */
  gatewayVersion: string | null;
  region: string | null;
  url: string | null;
  /** The deployment key's API key id. */
  apiKeyId: string;
  /** Unix milliseconds of the last heartbeat; null until the first. */
  lastSeenAt: number | null;
  health: HeartbeatInput["status"] | null;
  heartbeatIntervalSeconds: number;
}

export interface DeploymentDeps extends ControlDeps {
  /** Drops a revoked key from this process's API key cache. */
  forgetKey(secretHash: string): void;
  now?: () => number;
}

// Not "DEPLOYMENT": core/control/organisation/bootstrap.ts keeps its marker under that partition key.
export const DEPLOYMENT_KIND = "GATEWAY_DEPLOYMENT";
export const deploymentStore = (deps: ControlDeps) =>
  new ResourceStore<DeploymentResource>(deps.records, DEPLOYMENT_KIND, "dep");

export const DEFAULT_HEARTBEAT_SECONDS = 60;
/** Missed beats before a deployment is stale, and before it is offline. */
const STALE_AFTER_BEATS = 3;
const OFFLINE_AFTER_BEATS = 10;

export type DeploymentStatus = "online" | "stale" | "offline";

/** online: beat within 3 intervals; stale: within 10; offline: older, or never. */
export function deploymentStatus(deployment: DeploymentResource, now: number): DeploymentStatus {
  if (deployment.lastSeenAt === null) return "offline";
  const age = now - deployment.lastSeenAt;
  const interval = deployment.heartbeatIntervalSeconds * 1000;
  if (age <= STALE_AFTER_BEATS * interval) return "online";
  if (age <= OFFLINE_AFTER_BEATS * interval) return "stale";
  return "offline";
}

export function presentDeployment(deployment: DeploymentResource, now: number) {
  return {
    id: deployment.id,
    object: "deployment",
    name: deployment.name,
    version: deployment.gatewayVersion,
    region: deployment.region,
    url: deployment.url,
    status: deploymentStatus(deployment, now),
    health: deployment.health,
    last_seen_at: deployment.lastSeenAt === null ? null : new Date(deployment.lastSeenAt).toISOString(),
    heartbeat_interval_seconds: deployment.heartbeatIntervalSeconds,
    created_at: new Date(deployment.createdAt * 1000).toISOString(),
    last_updated_at: new Date(deployment.updatedAt * 1000).toISOString(),
  };
}

export type DeploymentView = ReturnType<typeof presentDeployment>;

const nowOf = (deps: DeploymentDeps) => (deps.now ?? Date.now)();

async function load(deps: DeploymentDeps, principal: Principal, id: string): Promise<DeploymentResource> {
  const found = await deploymentStore(deps).get(principal.organisationId, id);
  if (!found) throw new NotFound(`No deployment with id '${id}'.`, { code: "deployment_not_found" });
  return found;
}

/** Registers a deployment; the answer carries its deployment key, shown this once. */
export async function registerDeployment(
  deps: DeploymentDeps,
  principal: Principal,
  lazyInput: Lazy<DeploymentCreateInput>,
): Promise<DeploymentView & { deployment_key: string }> {
  requireOrganisationAdmin(principal);
  const input = await resolveLazy(lazyInput);
  const key = await createApiKey(deps.records, {
    organisationId: principal.organisationId,
    name: `deployment: ${input.name}`,
    description: "Heartbeats of a self-hosted gateway deployment",
    keyType: "organisation",
    keySubType: "service",
    scopes: ["deployments.heartbeat"],
    createdBy: principal.keyId ?? principal.userId,
  });
  const created = await deploymentStore(deps).create(principal.organisationId, {
    name: input.name,
    gatewayVersion: input.version ?? null,
    region: input.region ?? null,
    url: input.url ?? null,
    apiKeyId: key.id,
    lastSeenAt: null,
    health: null,
    heartbeatIntervalSeconds: DEFAULT_HEARTBEAT_SECONDS,
  });
  const view = presentDeployment(created, nowOf(deps));
  await audit(deps, principal, { action: "create", resourceType: "deployment", resourceId: created.id, after: view });
  return { ...view, deployment_key: key.secret };
}

export async function listDeployments(
  deps: DeploymentDeps,
  principal: Principal,
  query: { limit: number; cursor?: string },
): Promise<Page<DeploymentView>> {
  requireOrganisationAdmin(principal);
  const page = await readPage(() => deploymentStore(deps).list(principal.organisationId, query));
  const now = nowOf(deps);
  return { ...page, items: page.items.map((item) => presentDeployment(item, now)) };
}

export async function getDeployment(deps: DeploymentDeps, principal: Principal, id: string): Promise<DeploymentView> {
  requireOrganisationAdmin(principal);
  return presentDeployment(await load(deps, principal, id), nowOf(deps));
}

/**
 * Records a heartbeat. `self` names the deployment whose key makes the call; a deployment key may only beat
 * for its own deployment, an organisation admin for any of the organisation's.
 */
export async function recordHeartbeat(
  deps: DeploymentDeps,
  principal: Principal,
  input: { id: string; beat: Lazy<HeartbeatInput> },
): Promise<DeploymentView> {
  const store = deploymentStore(deps);
  const find = async (): Promise<DeploymentResource> => {
    if (input.id !== "self") return load(deps, principal, input.id);
    const page = await store.list(principal.organisationId, {
      limit: 1,
      filter: (deployment) => deployment.apiKeyId === principal.keyId,
    });
    const own = page.items[0];
    if (!own) throw new NotFound("This key belongs to no deployment.", { code: "deployment_not_found" });
    return own;
  };
  let current = await find();
  if (current.apiKeyId !== principal.keyId) {
    // Beating for another deployment is for those who may register them (never another deployment's key).
    requireScope(requireOrganisationAdmin(principal), "deployments.create");
  }
  const beat = await resolveLazy(input.beat);
  for (let attempt = 0; ; attempt++) {
    try {
      const updated = await store.update(current, {
        lastSeenAt: nowOf(deps),
        health: beat.status,
        ...(beat.version !== undefined ? { gatewayVersion: beat.version } : {}),
        ...(beat.region !== undefined ? { region: beat.region } : {}),
        ...(beat.url !== undefined ? { url: beat.url } : {}),
        ...(beat.heartbeat_interval_seconds !== undefined
          ? { heartbeatIntervalSeconds: beat.heartbeat_interval_seconds }
          : {}),
      });
      return presentDeployment(updated, nowOf(deps));
    } catch (error) {
      // Two beats at once (a retried request): the later one wins.
      if (!(error instanceof Conflict) || attempt >= 2) throw error;
      current = await find();
    }
  }
}

/** Deletes the deployment and revokes its key at once. */
export async function deleteDeployment(
  deps: DeploymentDeps,
  principal: Principal,
  id: string,
): Promise<{ id: string; object: "deployment"; deleted: true }> {
  requireOrganisationAdmin(principal);
  const deployment = await load(deps, principal, id);
  const keys = apiKeyStore(deps.records);
  const key = await keys.get(principal.organisationId, deployment.apiKeyId);
  if (key && key.status !== "revoked") {
    for (const hash of [key.secretHash, ...(key.previousSecretHashes ?? [])]) {
      await updateApiKeyLookup(deps.records, hash, { status: "revoked" });
      deps.forgetKey(hash);
    }
    await keys.update(key, { status: "revoked" });
  }
  await deploymentStore(deps).delete(deployment);
  await audit(deps, principal, {
    action: "delete",
    resourceType: "deployment",
    resourceId: deployment.id,
    before: presentDeployment(deployment, nowOf(deps)),
  });
  return { id: deployment.id, object: "deployment", deleted: true };
}
