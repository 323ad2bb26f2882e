import { ApiKeyAuthenticator } from "./auth/api-key-authenticator.ts";
import type { Settings } from "./config/settings.ts";
import { type TrustedHosts, parseTrustedHosts } from "./security/custom-host.ts";
import type { Stores } from "./store/ports.ts";

/**
 * The long-lived objects a handler may use, built once per process (per Lambda container) by the platform.
 * Later families add their services here.
 */
export interface Services {
  settings: Settings;
  stores: Stores;
  apiKeys: ApiKeyAuthenticator;
  /** TRUSTED_CUSTOM_HOSTS, parsed once. */
  trustedHosts: TrustedHosts;
}

export function createServices(settings: Settings, stores: Stores): Services {
  return {
    settings,
    stores,
    apiKeys: new ApiKeyAuthenticator(stores.records, settings.GATEWAY_API_KEY_CACHE_SECONDS * 1000),
    trustedHosts: parseTrustedHosts(settings.TRUSTED_CUSTOM_HOSTS),
  };
}
