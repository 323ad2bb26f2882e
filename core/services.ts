import type { ApiKeyAuthenticator } from "./auth/api-key-authenticator.ts";
import type { JwtAuthenticator } from "./auth/jwt.ts";
import type { Principal } from "./auth/principal.ts";
import type { Settings } from "./config/settings.ts";
import type { OrganisationSettingsCache } from "./control/directory.ts";
import type { McpToolHost } from "./features/mcp/tool-host.ts";
import type { ConsoleFiles } from "./http/console-files.ts";
import type { GatewayRequestHeaders } from "./http/gateway-headers.ts";
import type { ResponseCache } from "./inference/cache/response-cache.ts";
import type { ConversationOrigin } from "./inference/formats/history/index.ts";
import type { InferenceOutcome } from "./inference/gateway/outcome.ts";
import type { ConfigNode } from "./inference/routing/config.ts";
import type { CheckThreads } from "./inference/guardrails/types.ts";
import type { PolicyEnforcer } from "./inference/policies/enforcer.ts";
import type { AnalyticsRecorder } from "./observe/analytics/recorder.ts";
import type { RequestLogger } from "./observe/logs/request-logger.ts";
import type { GatewayMetrics } from "./observe/metrics/prometheus.ts";
import type { ProviderTarget, RouteKind } from "./providers/types.ts";
import type { TrustedHosts } from "./security/custom-host.ts";
import type { QueueMessage, Stores } from "./store/ports.ts";

/**
 * What every handler, queue consumer and scheduled task is given: the process's long-lived services, and for a
 * request its context. Types only: the platform builds the services (core/platform/services.ts createServices).
 */

/**
 * The long-lived objects a handler may use, built once per process (per Lambda container) by the platform
 * (core/platform/services.ts).
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
  /** Analytics aggregates, counted as each log is written (core/observe/analytics). */
  analytics: AnalyticsRecorder;
  /** Prometheus metrics, only when ENABLE_PROMETHEUS is set (core/observe/metrics). */
  metrics?: GatewayMetrics;
  /** Usage-limit and rate-limit policies, cached in memory, enforced through Counters (core/inference/policies). */
  policies: PolicyEnforcer;
  /**
   * The response cache (core/inference/cache): entries on Records and Blobs; semantic mode's vectors in the platform's
   * vector index (stores.vectors: SQLite + usearch locally, S3 Vectors on AWS).
   */
  cache: ResponseCache;
  /**
   * Routing seams for the control plane (core/inference/routing/source.ts and core/inference/gateway/plan.ts call them). Until
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
  /**
   * The data-plane pipeline's routing of one request (core/inference/gateway/inference.ts routeInference),
   * loaded on first use: a guardrail check's model call (a judge, a moderation) is a sub-request through it.
   * Held here so that the guardrails, which that pipeline loads, reach it without importing it.
   */
  routeInference: RouteInference;
  /** The MCP gateway's tools, for server-side MCP tool execution (core/features/mcp/tool-host.ts). */
  mcpTools?: McpToolHost;
  /** The web console's built files, where the gateway serves them itself (local; core/http/console-files.ts). */
  consoleFiles?: ConsoleFiles;
  /** Worker threads judging guardrail checks of long texts (local; core/inference/guardrails/budget.ts). Absent: none. */
  guardrailThreads?: CheckThreads;
}

/** Routes one inference request through a compiled config: the pipeline's steps 3 to 8 (core/inference/gateway). */
export type RouteInference = (
  route: RouteKind,
  body: Record<string, any>,
  config: ConfigNode,
  request: Request,
  ctx: RequestContext,
  outcome: InferenceOutcome & { finish(): void },
  requestId: string,
) => Promise<Response>;

/** Everything a handler may use besides the Request itself. */
export interface RequestContext {
  /** Taken from `x-gateway-trace-id` (or its `x-portkey-` alias) or generated. */
  traceId: string;
  /** Names the answers made for this request; read it with answerKeyOf (core/inference/gateway/answer-key.ts). */
  answerKey?: string;
  /** The request path (set by the app; read it instead of parsing `request.url` again). */
  path?: string;
  /** Path parameters of the matched route. */
  params: Record<string, string>;
  /** Set on routes that require authentication. */
  principal?: Principal;
  /**
   * The gateway request headers (spec 5.3), parsed once: set by the app on authenticated routes; use
   * `gatewayHeadersOf(request, ctx)` (core/inference/gateway/plan.ts) where it may be missing (unit tests).
   */
  gateway?: GatewayRequestHeaders;
  services: Services;
  /** Aborted when the client goes away or the platform ends the request. */
  signal: AbortSignal;
  /** Work that must finish before the platform freezes (Lambda) but after the response is sent. */
  waitUntil(work: Promise<unknown>): void;
  /** performance.now() when the request arrived. */
  startedAt: number;
  /** Set by inference routes: provider, usage, cost and timings, for logs and limits. */
  outcome?: InferenceOutcome;
  /**
   * Responses continuing a stored response (`previous_response_id`): the stored conversation in front of the input
   * and the target that made it. Routing prefers that target while it is available; any other target gets the
   * conversation without what was sealed for it (core/inference/formats/history).
   */
  conversation?: ConversationOrigin;
}

/**
 * A queue consumer: handles a batch and names the messages that failed, so only those are delivered again
 * (SQS partial batch responses on AWS, release in the local worker loop). Must be idempotent: delivery is
 * at-least-once. The consumers are listed in core/routes/queue-consumers.ts.
 */
export type QueueConsumer = (messages: QueueMessage[], services: Services) => Promise<{ failedIds: string[] }>;

/**
 * Periodic work (polling providers' native batches and fine-tuning jobs, expiring and finishing batches). On AWS
 * one scheduled Lambda (functions/workers/scheduled.ts, every minute) runs every task; locally the worker loop
 * runs them on their interval. Tasks must be idempotent and safe to run in two places at once: they change records
 * only with conditional writes. The tasks are listed in core/routes/scheduled-tasks.ts.
 */
export interface ScheduledTask {
  name: string;
  /** How often it runs locally; on AWS it runs on every tick of the schedule (one minute). */
  everySeconds: number;
  run(services: Services, signal: AbortSignal): Promise<void>;
}
