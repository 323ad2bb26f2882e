import { type NewApiKey, createApiKey } from "../../auth/api-key-records.ts";
import { newId } from "../../util/ids.ts";
import { ConditionFailedError, type Records } from "../../store/ports.ts";
import { organisationKey } from "./store.ts";
import { workspaceStore } from "../workspaces/store.ts";

/**
 * First start of a deployment: one organisation, its default workspace (ResourceStore kind WORKSPACE, slug
 * `default`) and an organisation admin key (a service key: no user is created; users arrive by invite).
 * A single conditional write on the deployment marker makes this safe when several processes (or Lambda
 * containers) start at once: exactly one creates, the others read what it made.
 */

export const DEPLOYMENT_KEY = { pk: "DEPLOYMENT", sk: "ORGANISATION" } as const;
export const DEFAULT_WORKSPACE_SLUG = "default";

export interface BootstrapResult {
  organisationId: string;
  defaultWorkspaceId: string;
  /** Present only for the process that created the organisation with a generated key: print it once. */
  adminApiKey?: string;
}

export async function ensureOrganisation(
  records: Records,
  options: { adminKeySecret?: string } = {},
): Promise<BootstrapResult> {
  const existing = await records.get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk);
  if (existing) return existingResult(existing);

  const organisationId = newId("org");
  const defaultWorkspaceId = newId("ws");
  try {
    await records.put({ ...DEPLOYMENT_KEY, organisationId, defaultWorkspaceId, state: "creating" }, { exists: false });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    const winner = await records.get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk);
    return existingResult(winner!);
  }

  const now = Math.floor(Date.now() / 1000);
  // The organisation record (core/control/organisation/store.ts): settings, default guardrails, exclusions.
  // `block_inline_config` would default to on (organisations created on/after 2026-06-19); the deployment's
  // own first organisation starts with it off so the README's first request (provider header + key) works.
  // Operators turn it on with PUT /v1/admin/organisation/settings or BLOCK_INLINE_CONFIG=true.
  await records.put({
    ...organisationKey(organisationId),
    id: organisationId,
    name: "Default organisation",
    settings: { block_inline_config: false },
    defaults: {},
    exclusions: {},
    version: 1,
    createdAt: now,
  });
  await workspaceStore(records).create(
    organisationId,
    { slug: DEFAULT_WORKSPACE_SLUG, name: "Default workspace", description: null, defaults: {}, isDefault: true },
    { id: defaultWorkspaceId },
  );

  const adminKey: NewApiKey = {
    organisationId,
    name: "Bootstrap admin key",
    keyType: "organisation",
    keySubType: "service",
    scopes: ["*"],
    organisationRole: "owner",
  };
  // On AWS the operator chooses the key (an SST secret) and only its hash is stored; locally it is generated.
  const created = await createApiKey(records, { ...adminKey, secret: options.adminKeySecret });
  const adminApiKey = options.adminKeySecret ? undefined : created.secret;
  await records.update(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk, { set: { state: "ready", createdAt: now } });
  return { organisationId, defaultWorkspaceId, adminApiKey };
}

function existingResult(item: Record<string, unknown>): BootstrapResult {
  return { organisationId: item.organisationId as string, defaultWorkspaceId: item.defaultWorkspaceId as string };
}
