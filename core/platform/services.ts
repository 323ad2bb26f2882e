import { ApiKeyAuthenticator } from "../auth/api-key-authenticator.ts";
import { JwtAuthenticator } from "../auth/jwt.ts";
import type { Settings } from "../config/settings.ts";
import { OrganisationSettingsCache } from "../control/directory.ts";
import { resolveDefaultConfig, resolveSavedConfig, resolveSavedProvider } from "../control/saved-resources.ts";
import { lazyMcpToolHost } from "../features/mcp/lazy-tool-host.ts";
import { throwingHttpErrors } from "../http/domain-errors.ts";
import { ResponseCache } from "../inference/cache/response-cache.ts";
import { PolicyEnforcer } from "../inference/policies/enforcer.ts";
import { AnalyticsRecorder } from "../observe/analytics/recorder.ts";
import { RequestLogger } from "../observe/logs/request-logger.ts";
import { observeLogs } from "../observe/metrics/observe.ts";
import { parseTrustedHosts } from "../security/custom-host.ts";
import type { RouteInference, Services } from "../services.ts";
import type { Stores } from "../store/ports.ts";
import { setMaxJsonDepth } from "../util/json-depth.ts";
import { setMaxUpstreamAnswerBytes } from "../providers/upstream/answer-limit.ts";

/** The pipeline's routing, loaded on the first guardrail check that calls a model (Services.routeInference). */
const routeInference: RouteInference = async (...args) =>
  (await import("../inference/gateway/inference.ts")).routeInference(...args);

/**
 * The services of one process (core/services.ts), as every platform builds them: the local server once, a
 * Lambda container once, the realtime service once.
 */
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
    routeInference,
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
