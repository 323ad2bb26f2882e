import type { Records } from "../../store/ports.ts";
import { type SealedValue, hintOf, MASK } from "../../control/sealed-values.ts";

/**
 * An organisation's OIDC single sign-on settings (spec 5.5): one record, pk `ORG#<id>`, sk `SSO`. The client
 * secret and the private JWKS of `private_key_jwt` are sealed (core/control/sealed-values.ts); views show a
 * mask and the JWKS's public keys only. `additional_clients` are other OIDC clients of the same issuer that a
 * login chooses with `sso_client_id`.
 */

export const AUTH_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt"] as const;
export type TokenEndpointAuthMethod = (typeof AUTH_METHODS)[number];

export interface SsoClientRecord {
  client_id: string;
  token_endpoint_auth_method: TokenEndpointAuthMethod;
  client_secret?: SealedValue;
  /** The admin's private key set, sealed; `jwks_public` is what views show of it. */
  jwks?: SealedValue;
  jwks_public?: { keys: Array<Record<string, unknown>> };
  scopes: string[];
}

export interface SsoSettingsRecord extends SsoClientRecord {
  organisationId: string;
  enabled: boolean;
  issuer: string;
  disable_auto_provision_user: boolean;
  /** Lower-cased domains whose verified addresses may be provisioned on first sign-in. */
  allowed_domains: string[];
  additional_clients: Array<SsoClientRecord & { sso_client_id: string }>;
  version: number;
  updatedAt: number;
}

export const ssoSettingsKey = (organisationId: string) => ({ pk: `ORG#${organisationId}`, sk: "SSO" });

export async function readSsoSettings(
  records: Records,
  organisationId: string,
): Promise<SsoSettingsRecord | undefined> {
  const key = ssoSettingsKey(organisationId);
  const item = await records.get(key.pk, key.sk);
  if (!item) return undefined;
  const { pk, sk, ...rest } = item;
  return rest as unknown as SsoSettingsRecord;
}

export async function writeSsoSettings(records: Records, settings: SsoSettingsRecord): Promise<void> {
  await records.put({ ...ssoSettingsKey(settings.organisationId), ...settings });
}

/** The client a login uses: the main one, or the additional client named by `sso_client_id`. */
export function selectClient(settings: SsoSettingsRecord, ssoClientId?: string): SsoClientRecord | undefined {
  if (!ssoClientId) return settings;
  return settings.additional_clients.find((client) => client.sso_client_id === ssoClientId);
}

function presentClient(client: SsoClientRecord) {
  return {
    client_id: client.client_id,
    token_endpoint_auth_method: client.token_endpoint_auth_method,
    client_secret: client.client_secret ? hintOf(client.client_secret) : null,
    jwks: client.jwks_public ?? null,
    scopes: client.scopes,
  };
}

/** What the admin API shows: never a secret, never a private key. */
export function presentSsoSettings(settings: SsoSettingsRecord | undefined) {
  if (!settings) return { object: "sso_settings", enabled: false, configured: false };
  return {
    object: "sso_settings",
    configured: true,
    enabled: settings.enabled,
    issuer: settings.issuer,
    ...presentClient(settings),
    disable_auto_provision_user: settings.disable_auto_provision_user,
    allowed_domains: settings.allowed_domains,
    additional_clients: settings.additional_clients.map((client) => ({
      sso_client_id: client.sso_client_id,
      ...presentClient(client),
    })),
    updated_at: new Date(settings.updatedAt * 1000).toISOString(),
  };
}

export { MASK };
