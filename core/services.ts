import { ApiKeyAuthenticator } from "./auth/api-key-authenticator.ts";
import { JwtAuthenticator } from "./auth/jwt.ts";
import { OrganisationSettingsCache } from "./control/directory.ts";
import { resolveDefaultConfig, resolveSavedConfig, resolveSavedProvider } from "./control/saved-resources.ts";
import type { Settings } from "./config/settings.ts";
import type { RequestContext } from "./http/context.ts";
import { throwingHttpErrors } from "./http/domain-errors.ts";
import { setMaxJsonDepth } from "./util/json-depth.ts";
import { setMaxUpstreamAnswerBytes } from "./gateway/upstream/answer-limit.ts";
import { RequestLogger } from "./logs/request-logger.ts";
import { PolicyEnforcer } from "./policies/enforcer.ts";
import { AnalyticsRecorder } from "./analytics/recorder.ts";
import { ResponseCache } from "./cache/response-cache.ts";
import { type GatewayMetrics, observeLogs } from "./metrics/observe.ts";
import type { ProviderTarget } from "./providers/types.ts";
import { type TrustedHosts, parseTrustedHosts } from "./security/custom-host.ts";
import type { Stores } from "./store/ports.ts";
import type { McpToolHost } from "./mcp/tool-host.ts";
import type { ConsoleFiles } from "./console/static-files.ts";
import type { CheckThreads } from "./guardrails/types.ts";
import { lazyMcpToolHost } from "./mcp/lazy-tool-host.ts";

/**
 * The long-lived objects a handler may use, built once per process (per Lambda container) by the platform.
 * Later families add their services here.
 */
export interface Services {
  settings: Settings;
  stores: Stores;
  apiKeys: ApiKeyAuthenticator;
  /** Bearer JWTs (spec 5.4), when GATEWAY_JWT_JWKS or GATEWAY_JWT_JWKS_URL is set. */
  jwt: JwtAuthenticator;
  /** Organisation settings (`ORG#<id>`.settings) cached ~15 s, for hot-path checks such as block_inline_config. */
  orgSettings: OrganisationSettingsCache;
  /** TRUSTED_CUSTOM_HOSTS, parsed once. */
  trustedHosts: TrustedHosts;
  logger: RequestLogger;
  /** Analytics aggregates, counted as each log is written (core/analytics). */
  analytics: AnalyticsRecorder;
  /** Prometheus metrics, only when ENABLE_PROMETHEUS is set (core/metrics). */
  metrics?: GatewayMetrics;
  /** Usage-limit and rate-limit policies, cached in memory, enforced through Counters (core/policies). */
  policies: PolicyEnforcer;
  /**
   * The response cache (core/cache): entries on Records and Blobs; semantic mode's vectors in the platform's
   * vector index (stores.vectors: SQLite + usearch locally, S3 Vectors on AWS).
   */
  cache: ResponseCache;
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
  /** The MCP gateway's tools, for server-side MCP tool execution (core/mcp/tool-host.ts). */
  mcpTools?: McpToolHost;
  /** The web console's built files, where the gateway serves them itself (local; core/console/static-files.ts). */
  consoleFiles?: ConsoleFiles;
  /** Worker threads judging guardrail checks of long texts (local; core/guardrails/budget.ts). Absent: none. */
  guardrailThreads?: CheckThreads;
}

export function createServices(settings: Settings, stores: Stores): Services {
  setMaxJsonDepth(settings.GATEWAY_MAX_JSON_DEPTH);
  setMaxUpstreamAnswerBytes(settings.GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES);
  const services: Services = {
    settings,
    stores,
    apiKeys: new ApiKeyAuthenticator(stores.records, settings.GATEWAY_API_KEY_CACHE_SECONDS * 1000),
    jwt: new JwtAuthenticator(settings, stores.records, parseTrustedHosts(settings.TRUSTED_CUSTOM_HOSTS)),
    orgSettings: new OrganisationSettingsCache(stores.records),
    trustedHosts: parseTrustedHosts(settings.TRUSTED_CUSTOM_HOSTS),
    logger: new RequestLogger(stores.logSink, stores.blobs, {
      retentionDays: settings.GATEWAY_LOG_RETENTION_DAYS,
      threshold: settings.LOG_STORE_CONNECTION_FAILURE_THRESHOLD,
      backoffMs: settings.LOG_STORE_CONNECTION_BACKOFF_MS,
      timeoutMs: settings.LOG_STORE_CONNECTION_TIMEOUT_MS,
    }),
    // Saved configs, integrations and virtual keys (core/control/saved-resources.ts), answering HTTP errors.
    resolveSavedConfig: throwingHttpErrors(resolveSavedConfig),
    resolveDefaultConfig: throwingHttpErrors(resolveDefaultConfig),
    resolveSavedProvider: throwingHttpErrors(resolveSavedProvider),
    analytics: new AnalyticsRecorder(stores.counters, stores.records, {
      // One process serves many requests locally: sum aggregates for a second. Lambda containers may freeze.
      flushIntervalMs: settings.GATEWAY_PLATFORM === "local" ? 1000 : 0,
    }),
    policies: new PolicyEnforcer(stores.records, stores.counters),
    cache: new ResponseCache(stores.records, stores.blobs, {
      maxEntryBytes: settings.GATEWAY_CACHE_MAX_ENTRY_BYTES,
      defaultMaxAgeSeconds: settings.GATEWAY_CACHE_MAX_AGE,
      semanticIndex: stores.vectors,
    }),
  };
  services.mcpTools = lazyMcpToolHost(services);
  observeLogs(services);
  return services;
}
