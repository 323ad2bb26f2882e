import type { Configuration } from "openid-client";
import { openValue } from "../../control/sealed-values.ts";
import { type TrustedHosts, checkCustomHost, isTrustedHost } from "../../security/custom-host.ts";
import { guardedFetch } from "../../security/guarded-dispatcher.ts";
import type { Secrets } from "../../store/ports.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import { type PrivateJwks, signingKey } from "./client-keys.ts";
import type { SsoClientRecord, SsoSettingsRecord } from "./settings.ts";

/**
 * openid-client configurations of an organisation's IdP clients: discovery (issuer + /.well-known), the client's
 * token endpoint authentication, and every request through the SSRF-guarded fetch without redirects. Cached
 * per organisation, client and settings version for a few minutes: discovery is one IdP round trip a login.
 * Plain http issuers are allowed only for hosts in TRUSTED_CUSTOM_HOSTS (local IdPs, tests).
 */

const CACHE_MS = 5 * 60_000;
const cache = new TtlCache<string, Promise<Configuration>>({ ttlMs: CACHE_MS, maxEntries: 1000 });

export function forgetOidcConfigs(organisationId: string): void {
  cache.deleteWhere((key) => key.startsWith(`${organisationId}/`));
}

export function oidcConfig(
  settings: SsoSettingsRecord,
  client: SsoClientRecord,
  ssoClientId: string,
  secrets: Secrets,
  trusted: TrustedHosts,
): Promise<Configuration> {
  const key = `${settings.organisationId}/${ssoClientId}/${settings.version}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const made = discover(settings.issuer, client, secrets, trusted).catch((error) => {
    cache.deleteIf(key, made);
    throw error;
  });
  cache.set(key, made);
  return made;
}

async function discover(
  issuer: string,
  client: SsoClientRecord,
  secrets: Secrets,
  trusted: TrustedHosts,
): Promise<Configuration> {
  const oidc = await import("openid-client");
  const url = await checkCustomHost(issuer, trusted, "issuer");
  const fetchGuarded = guardedFetch(trusted);
  const execute = url.protocol === "http:" && isTrustedHost(url.hostname, trusted) ? [oidc.allowInsecureRequests] : [];
  return oidc.discovery(
    url,
    client.client_id,
    { token_endpoint_auth_method: client.token_endpoint_auth_method },
    await clientAuth(client, secrets),
    {
      [oidc.customFetch]: (input, init) => fetchGuarded(input, { ...(init as RequestInit), redirect: "manual" }),
      execute,
    },
  );
}

async function clientAuth(client: SsoClientRecord, secrets: Secrets) {
  const oidc = await import("openid-client");
  if (client.token_endpoint_auth_method === "private_key_jwt") {
    return oidc.PrivateKeyJwt(await signingKey((await openValue(secrets, client.jwks!)) as PrivateJwks));
  }
  const secret = client.client_secret ? String(await openValue(secrets, client.client_secret)) : undefined;
  return client.token_endpoint_auth_method === "client_secret_post"
    ? oidc.ClientSecretPost(secret)
    : oidc.ClientSecretBasic(secret);
}
