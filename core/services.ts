import { ApiKeyAuthenticator } from "./auth/api-key-authenticator.ts";
import type { Settings } from "./config/settings.ts";
import type { RequestContext } from "./http/context.ts";
import { notFound } from "./http/errors.ts";
import { RequestLogger } from "./logs/request-logger.ts";
import type { ProviderTarget } from "./providers/types.ts";
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
  logger: RequestLogger;
  /**
   * Routing seams for the control plane (core/routing/source.ts and core/gateway/plan.ts call them). Until
   * configs and providers are stored, saved configs and saved providers answer 404 and there is no default.
   *
   * A saved config by id or slug (`x-gateway-config: pc-...`): its config JSON. Return the same object while
   * the config is unchanged: compiled configs are cached by object identity. Throws 404 when unknown.
   */
  resolveSavedConfig(idOrSlug: string, ctx: RequestContext): Promise<unknown>;
  /** The default config of the caller's workspace (or API key), used when a request names no config or provider. */
  resolveDefaultConfig(ctx: RequestContext): Promise<unknown | undefined>;
  /**
   * A saved provider (`@slug` in x-gateway-provider or in a config's provider, a legacy virtual key): the
   * target it stands for (provider id, credentials, custom host...). Throws 404 when unknown.
   */
  resolveSavedProvider(slug: string, ctx: RequestContext): Promise<ProviderTarget>;
}

export function createServices(settings: Settings, stores: Stores): Services {
  return {
    settings,
    stores,
    apiKeys: new ApiKeyAuthenticator(stores.records, settings.GATEWAY_API_KEY_CACHE_SECONDS * 1000),
    trustedHosts: parseTrustedHosts(settings.TRUSTED_CUSTOM_HOSTS),
    logger: new RequestLogger(stores.records, stores.blobs, {
      retentionDays: settings.GATEWAY_LOG_RETENTION_DAYS,
      threshold: settings.LOG_STORE_CONNECTION_FAILURE_THRESHOLD,
      backoffMs: settings.LOG_STORE_CONNECTION_BACKOFF_MS,
      timeoutMs: settings.LOG_STORE_CONNECTION_TIMEOUT_MS,
    }),
    resolveSavedConfig: async (idOrSlug) => {
      throw notFound(`Unknown config '${idOrSlug}'. Send the config JSON inline, or save it first.`, "config_not_found");
    },
    resolveDefaultConfig: async () => undefined,
    resolveSavedProvider: async (slug) => {
      throw notFound(`Unknown saved provider '@${slug}'. Create an integration with that slug first.`, "provider_not_found");
    },
  };
}
