import type { Principal } from "../../auth/principal.ts";
import { type ProviderSecrets, SECRET_FIELD_NAMES } from "./secrets.ts";
import { providerIdOf } from "../../providers/registry.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { type TrustedHosts, checkCustomHost } from "../../security/custom-host.ts";
import { type HostValueField, hostValueProblem } from "../../security/host-values.ts";
import type { Secrets } from "../../store/ports.ts";
import { checkCredentialRefs, referenceHint } from "./refs.ts";
import { Forbidden, Invalid } from "../errors.ts";
import type { ConfigurationsInput } from "./schemas.ts";

/**
 * Provider credentials of saved providers (integrations and legacy virtual keys share this module):
 * - what the client sends: `key` plus provider-specific `configurations` (custom host, Azure resource /
 *   deployment / api version, Vertex project / region / service account, AWS keys / region);
 * - how it is stored: the non-secret settings in clear, every secret field in ONE blob encrypted through the
 *   Secrets port (`sealedCredentials`), never returned (GET shows masked hints), never audited or logged;
 * - how it becomes a ProviderTarget when a request names the saved provider.
 * The request schemas of the saved-resource routes live in credentials/schemas.ts: the data plane
 * imports this module (targetOf, openCredentials) and must not build them.
 */

/** Non-secret settings, stored in clear and shown on GET. */
export interface ProviderSettings {
  customHost?: string;
  azure?: { resourceName?: string; deploymentId?: string; apiVersion?: string; modelName?: string };
  vertex?: { projectId?: string; region?: string };
  aws?: { region?: string };
  /** Reconciliation against the provider's bill: the drift (percent of the bill) flagged on a day. */
  reconciliation?: { driftPercent?: number };
}

/** What a saved-provider record holds about its credentials. */
export interface StoredCredentials {
  /** Registry provider id. */
  provider: string;
  settings: ProviderSettings;
  /** Secrets port ciphertext of JSON ProviderSecrets. */
  sealedCredentials?: string;
  /** Masked hints of the secret fields present (e.g. `sk****cdef`). */
  hints: Record<string, string>;
}

/** Validates a provider id against the registry (Invalid naming `param`). */
export function providerId(value: string, param: string): string {
  const id = providerIdOf(value.trim());
  if (!id)
    throw new Invalid(`Unknown provider '${value}'. docs/providers.md lists the supported provider ids.`, {
      param,
      code: "invalid_provider",
    });
  return id;
}

const compact = <T extends object>(value: T): T | undefined => {
  const entries = Object.entries(value).filter(([, item]) => item !== undefined);
  return entries.length > 0 ? (Object.fromEntries(entries) as T) : undefined;
};

/** Splits client input into clear settings and secrets. The custom host is SSRF-checked (with DNS). */
export async function parseCredentialInput(
  input: { key?: string; configurations?: ConfigurationsInput },
  trusted: TrustedHosts,
  param = "configurations",
): Promise<{ settings: ProviderSettings; secrets: ProviderSecrets }> {
  const c = input.configurations ?? {};
  const settings: ProviderSettings = {};
  if (c.custom_host) {
    settings.customHost = (await checkCustomHost(c.custom_host, trusted, `${param}.custom_host`)).href.replace(
      /\/+$/,
      "",
    );
  }
  settings.azure = compact({
    resourceName: c.resource_name ?? c.azure_resource_name,
    deploymentId: c.deployment_id ?? c.azure_deployment_id ?? c.deployment_name ?? c.azure_deployment_name,
    apiVersion: c.api_version ?? c.azure_api_version,
    modelName: c.azure_model_name,
  });
  settings.vertex = compact({ projectId: c.vertex_project_id, region: c.vertex_region });
  settings.aws = compact({ region: c.aws_region });
  settings.reconciliation = compact({ driftPercent: c.reconciliation_drift_percent });
  const hostValues: Array<[HostValueField, string, string | undefined]> = [
    [
      "resource_name",
      c.resource_name !== undefined ? "resource_name" : "azure_resource_name",
      settings.azure?.resourceName,
    ],
    ["vertex_project_id", "vertex_project_id", settings.vertex?.projectId],
    ["vertex_region", "vertex_region", settings.vertex?.region],
    ["aws_region", "aws_region", settings.aws?.region],
  ];
  for (const [field, name, value] of hostValues) {
    const problem = value === undefined ? undefined : hostValueProblem(field, value);
    if (problem)
      throw new Invalid(`Invalid value for '${param}.${name}': ${problem}`, {
        param: `${param}.${name}`,
        code: "invalid_configuration",
      });
  }
  const account = c.vertex_service_account_json;
  const secrets: ProviderSecrets = {
    apiKey: input.key?.replace(/^Bearer\s+/i, "").trim() || undefined,
    vertexServiceAccountJson: typeof account === "object" ? JSON.stringify(account) : account,
    awsAccessKeyId: c.aws_access_key_id,
    awsSecretAccessKey: c.aws_secret_access_key,
    awsSessionToken: c.aws_session_token,
    adminApiKey: c.admin_api_key?.replace(/^Bearer\s+/i, "").trim() || undefined,
  };
  const kept = compact(secrets) ?? {};
  checkCredentialRefs(kept, (name) => (name === "key" ? "key" : `${param}.${name}`));
  return { settings: compact(settings) ?? {}, secrets: kept };
}

/** Masks a secret for display: never more than 2 leading and 4 trailing characters, and only for long values. */
export function maskSecret(value: string): string {
  if (value.length < 12) return "********";
  return `${value.slice(0, 2)}********${value.slice(-4)}`;
}

/** Encrypts the secrets (one blob) and returns what the record stores. */
export async function sealCredentials(
  secretsPort: Secrets,
  provider: string,
  settings: ProviderSettings,
  secrets: ProviderSecrets,
): Promise<StoredCredentials> {
  const hints: Record<string, string> = {};
  for (const [name, value] of Object.entries(secrets) as Array<[keyof ProviderSecrets, string | undefined]>) {
    if (!value) continue;
    // A secret reference is shown as written (it says where the secret is, not what it is).
    hints[SECRET_FIELD_NAMES[name]] =
      referenceHint(value) ??
      (name === "apiKey" || name === "awsAccessKeyId" || name === "adminApiKey" ? maskSecret(value) : "********");
  }
  const stored: StoredCredentials = { provider, settings, hints };
  if (Object.keys(hints).length > 0) stored.sealedCredentials = await secretsPort.encrypt(JSON.stringify(secrets));
  return stored;
}

export async function openCredentials(secretsPort: Secrets, stored: StoredCredentials): Promise<ProviderSecrets> {
  if (!stored.sealedCredentials) return {};
  return JSON.parse(await secretsPort.decrypt(stored.sealedCredentials)) as ProviderSecrets;
}

/**
 * Applies an update: settings merge group by group, secrets merge field by field (absent fields keep their
 * stored value, so a PUT without `key` keeps the key).
 */
export async function updateCredentials(
  secretsPort: Secrets,
  current: StoredCredentials,
  next: { settings: ProviderSettings; secrets: ProviderSecrets },
): Promise<StoredCredentials> {
  const settings: ProviderSettings = {
    ...current.settings,
    ...next.settings,
    azure: compact({ ...current.settings.azure, ...next.settings.azure }),
    vertex: compact({ ...current.settings.vertex, ...next.settings.vertex }),
    aws: compact({ ...current.settings.aws, ...next.settings.aws }),
    reconciliation: compact({ ...current.settings.reconciliation, ...next.settings.reconciliation }),
  };
  const secrets = { ...(await openCredentials(secretsPort, current)), ...next.secrets };
  return sealCredentials(secretsPort, current.provider, compact(settings) ?? {}, secrets);
}

/** The public, secret-free view of stored credentials (Portkey-style `configurations` with masked secrets). */
export function presentCredentials(stored: StoredCredentials): {
  masked_api_key: string | null;
  configurations: Record<string, unknown>;
} {
  const { settings, hints } = stored;
  const configurations: Record<string, unknown> = {
    custom_host: settings.customHost,
    resource_name: settings.azure?.resourceName,
    deployment_id: settings.azure?.deploymentId,
    api_version: settings.azure?.apiVersion,
    azure_model_name: settings.azure?.modelName,
    vertex_project_id: settings.vertex?.projectId,
    vertex_region: settings.vertex?.region,
    aws_region: settings.aws?.region,
    reconciliation_drift_percent: settings.reconciliation?.driftPercent,
  };
  for (const [name, hint] of Object.entries(hints)) if (name !== "key") configurations[name] = hint;
  return {
    masked_api_key: hints.key ?? null,
    configurations: Object.fromEntries(Object.entries(configurations).filter(([, value]) => value !== undefined)),
  };
}

/** The ProviderTarget a saved provider stands for (credentials decrypted). */
export function targetOf(stored: StoredCredentials, secrets: ProviderSecrets): ProviderTarget {
  const { settings } = stored;
  const target: ProviderTarget = { provider: stored.provider };
  if (secrets.apiKey) target.apiKey = secrets.apiKey;
  if (settings.customHost) target.customHost = settings.customHost;
  if (settings.azure) target.azure = { ...settings.azure };
  const vertex = compact({ ...settings.vertex, serviceAccountJson: secrets.vertexServiceAccountJson });
  if (vertex) target.vertex = vertex;
  const aws = compact({
    ...settings.aws,
    accessKeyId: secrets.awsAccessKeyId,
    secretAccessKey: secrets.awsSecretAccessKey,
    sessionToken: secrets.awsSessionToken,
  });
  if (aws) target.aws = aws;
  return target;
}

// --- shared helpers of the saved-resource routes -------------------------------------------------------------

/** The workspace a principal is bound to (workspace keys, workspace JWTs); undefined for organisation keys. */
export function boundWorkspace(principal: Principal): string | undefined {
  if (principal.keyType === "organisation") return undefined;
  return principal.workspaceId;
}

/** A slug made from a name plus random characters (virtual keys and configs created without one). */
export function slugFrom(name: string): string {
  const base = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  const suffix = Math.random().toString(16).slice(2, 8).padEnd(6, "0");
  return base ? `${base}-${suffix}` : `vk-${suffix}`;
}

/** A workspace-bound caller may only act on its own workspace's resources (and read organisation-level ones). */
export function assertWritable(principal: Principal, resource: { workspaceId?: string }, what: string): void {
  const bound = boundWorkspace(principal);
  if (bound && resource.workspaceId !== bound) {
    throw new Forbidden(`This key cannot modify ${what} outside its workspace.`, { code: "workspace_forbidden" });
  }
}

export const isoTime = (seconds: number) => new Date(seconds * 1000).toISOString();
