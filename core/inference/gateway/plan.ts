import { SESSION_TAG_NAME, parseSessionTags } from "./aws-session-tags.ts";
import type { RequestContext } from "../../services.ts";
import { HttpError, badRequest } from "../../http/errors.ts";
import { type GatewayRequestHeaders, RESPONSE_HEADERS, parseGatewayHeaders } from "../../http/gateway-headers.ts";
import { providerIdOf } from "../../providers/registry.ts";
import { type ProviderTarget, UpstreamError } from "../../providers/types.ts";
import type { LeafNode } from "../routing/config.ts";
import { gatewayTargetError, RoutingFailure } from "../routing/engine.ts";
import { checkedCustomHostBase } from "../../security/custom-host.ts";
import type { AttemptRecord, InferenceOutcome } from "./outcome.ts";
import { forwardedValues, headerCredentials, targetFromHeaders } from "./target-from-headers.ts";

/** The gateway headers of a request: parsed by the app on authenticated routes, else here (once). */
export function gatewayHeadersOf(request: Request, ctx: RequestContext): GatewayRequestHeaders {
  ctx.gateway ??= parseGatewayHeaders(request.headers, ctx.traceId);
  return ctx.gateway;
}

/** A leaf of the config tree made concrete for one request. */
export interface ResolvedLeaf {
  target: ProviderTarget;
  timeoutMs: number;
}

/**
 * Turns config leaves into provider targets for one request (memoised per leaf, so retries resolve once):
 * - the header target (no config): `x-gateway-provider` + `Authorization`, custom host and cloud headers;
 * - `@slug` providers and virtual keys: Services.resolveSavedProvider;
 * - config leaves: their provider, `api_key`, custom host and cloud fields. A leaf without credentials uses the
 *   request's `Authorization` (and cloud headers, and `x-gateway-custom-host`) only when the request names no
 *   provider or the same provider, so one provider's key is never sent to another.
 * Forward headers: the request's `x-gateway-forward-headers` plus the leaf's `forward_headers`, minus
 * `x-gateway-sensitive-headers`. Timeout: the leaf's (or inherited) `request_timeout`, else
 * `x-gateway-request-timeout`, else REQUEST_TIMEOUT.
 */
export class LeafResolver {
  private readonly resolved = new Map<LeafNode, Promise<ResolvedLeaf>>();
  private readonly request: Request;
  private readonly gateway: GatewayRequestHeaders;
  private readonly ctx: RequestContext;

  constructor(request: Request, gateway: GatewayRequestHeaders, ctx: RequestContext) {
    this.request = request;
    this.gateway = gateway;
    this.ctx = ctx;
  }

  resolve(leaf: LeafNode): Promise<ResolvedLeaf> {
    let resolved = this.resolved.get(leaf);
    if (!resolved) {
      resolved = this.build(leaf).catch((thrown: unknown) => {
        if (thrown instanceof HttpError || thrown instanceof UpstreamError) throw thrown;
        // A lookup that threw (a store, credentials that no longer open): a failed target, noted in the log's
        // attempts like one that was called.
        const error = gatewayTargetError(thrown);
        const outcome = this.ctx.outcome;
        const provider = leaf.provider ?? leaf.virtualKey ?? this.gateway.provider ?? this.gateway.virtualKey ?? "";
        if (outcome)
          recordAttempt(outcome, { path: leaf.path, provider, retry: 0, status: 502, ms: 0, error: error.message });
        throw error;
      });
      this.resolved.set(leaf, resolved);
    }
    return resolved;
  }

  private async build(leaf: LeafNode): Promise<ResolvedLeaf> {
    const { gateway, ctx } = this;
    const headers = this.request.headers;
    const trusted = ctx.services.trustedHosts;
    let target: ProviderTarget;
    if (leaf.fromHeaders) {
      const saved = gateway.virtualKey ?? (gateway.provider?.startsWith("@") ? gateway.provider : undefined);
      if (saved !== undefined) target = { ...(await ctx.services.resolveSavedProvider(saved.replace(/^@/, ""), ctx)) };
      else {
        const fromHeaders = await targetFromHeaders(headers, trusted, gateway);
        // A config of guardrails (or the like) without a provider of its own needs the request to name one.
        if (!fromHeaders) throw missingProvider();
        target = fromHeaders;
        // A JWT-authenticated request's Authorization is the caller's token, never a provider key.
        if (ctx.principal?.kind === "jwt") delete target.apiKey;
      }
    } else {
      target = await this.configTarget(leaf);
    }
    const names = [...gateway.forwardHeaders, ...(leaf.settings.forwardHeaders ?? [])];
    if (names.length > 0) {
      const sensitive = new Set(gateway.sensitiveHeaders);
      const forward = forwardedValues(
        headers,
        names.filter((name) => !sensitive.has(name.toLowerCase())),
      );
      if (forward) target.forwardHeaders = { ...target.forwardHeaders, ...forward };
    }
    const sessionTags = parseSessionTags(gateway.values.get(SESSION_TAG_NAME));
    // Per-request session tags (spec 5.2) reach Bedrock targets; they matter when the gateway assumes a role.
    if (sessionTags && target.provider === "bedrock") target.aws = { ...target.aws, sessionTags };
    if (!providerIdOf(target.provider)) {
      throw badRequest(`Unknown provider '${target.provider}'.`, "x-gateway-provider", "invalid_provider");
    }
    const timeoutMs =
      leaf.settings.requestTimeoutMs ?? gateway.requestTimeoutMs ?? ctx.services.settings.REQUEST_TIMEOUT;
    const resolved: ResolvedLeaf = { target, timeoutMs };
    return resolved;
  }

  private async configTarget(leaf: LeafNode): Promise<ProviderTarget> {
    const { gateway, ctx } = this;
    const saved = leaf.virtualKey ?? (leaf.provider?.startsWith("@") ? leaf.provider : undefined);
    let target: ProviderTarget;
    let credentialsFromConfig = false;
    if (saved !== undefined) {
      target = { ...(await ctx.services.resolveSavedProvider(saved.replace(/^@/, ""), ctx)) };
      credentialsFromConfig = true;
    } else {
      target = { provider: leaf.provider! };
    }
    const headerProvider = gateway.provider?.toLowerCase();
    const sameProvider = headerProvider === undefined || headerProvider === target.provider;
    if (leaf.apiKey !== undefined) {
      target.apiKey = leaf.apiKey;
      credentialsFromConfig = true;
    }
    if (leaf.azure) target.azure = { ...target.azure, ...definedOnly(leaf.azure) };
    if (leaf.vertex) target.vertex = { ...target.vertex, ...definedOnly(leaf.vertex) };
    if (leaf.aws) target.aws = { ...target.aws, ...definedOnly(leaf.aws) };
    if (!credentialsFromConfig && sameProvider) {
      const fromHeaders = headerCredentials(this.request.headers, gateway);
      if (this.ctx.principal?.kind !== "jwt") target.apiKey ??= fromHeaders.apiKey;
      if (fromHeaders.azure) target.azure = { ...fromHeaders.azure, ...target.azure };
      if (fromHeaders.vertex) target.vertex = { ...fromHeaders.vertex, ...target.vertex };
      if (fromHeaders.aws) target.aws = { ...fromHeaders.aws, ...target.aws };
    }
    const customHost =
      leaf.settings.customHost ?? (sameProvider && !target.customHost ? gateway.customHost : undefined);
    if (customHost) {
      const param = leaf.settings.customHost ? "x-gateway-config" : "x-gateway-custom-host";
      target.customHost = await checkedCustomHostBase(customHost, ctx.services.trustedHosts, param);
    }
    return target;
  }
}

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as Partial<T>;
}

/** Keeps the attempt log on the outcome (for logs). */
export function recordAttempt(outcome: InferenceOutcome, record: AttemptRecord): void {
  if (outcome.attempts) outcome.attempts.push(record);
  else outcome.attempts = [record];
}

/** Runs one leaf attempt and records it on the outcome, whether it answers or fails. */
export async function recordedAttempt(
  outcome: InferenceOutcome,
  attempt: { path: string; provider: string; retry: number },
  run: () => Promise<Response>,
): Promise<Response> {
  const started = performance.now();
  try {
    const response = await run();
    recordAttempt(outcome, { ...attempt, status: response.status, ms: performance.now() - started });
    return response;
  } catch (thrown) {
    // Anything but an upstream failure or the client's mistake failed inside the gateway: a failed target.
    const error = thrown instanceof HttpError || thrown instanceof UpstreamError ? thrown : gatewayTargetError(thrown);
    const message = error.message;
    recordAttempt(outcome, {
      ...attempt,
      status: attemptStatus(error),
      ms: performance.now() - started,
      error: message,
    });
    throw error;
  }
}

/** Notes a routed request that failed as a whole (status, error, and where in the config it ended). */
export function recordFailure(outcome: InferenceOutcome & { finish(): void }, error: unknown): void {
  const upstream = error instanceof RoutingFailure ? error.error : error instanceof UpstreamError ? error : undefined;
  outcome.status = upstream?.status ?? attemptStatus(error);
  outcome.error = {
    status: outcome.status,
    message: error instanceof Error ? error.message : String(error),
    code: upstream?.code ?? null,
  };
  if (error instanceof RoutingFailure) {
    outcome.retries = error.retries;
    outcome.lastUsedOptionIndex = error.leaf.path;
  }
  outcome.finish();
}

export function attemptStatus(error: unknown): number {
  return error instanceof UpstreamError ? error.status : error instanceof HttpError ? error.status : 500;
}

/** The routing response headers (spec 5.3): retry count, last used option index, provider, cache status. */
export function routingHeaders(
  path: string,
  retries: number,
  provider: string | undefined,
  cacheStatus?: string,
): Record<string, string> {
  const headers: Record<string, string> = {
    [RESPONSE_HEADERS.retryAttemptCount]: String(retries),
    [RESPONSE_HEADERS.lastUsedOptionIndex]: path,
  };
  if (provider) headers[RESPONSE_HEADERS.provider] = provider;
  if (cacheStatus) headers[RESPONSE_HEADERS.cacheStatus] = cacheStatus;
  return headers;
}

/** An upstream failure as the client's error response (OpenAI shape, upstream status kept). */
export function upstreamToHttp(error: UpstreamError, headers: Record<string, string>): HttpError {
  const status = error.status >= 400 && error.status <= 599 ? error.status : 502;
  return new HttpError(status, error.message, { type: error.type, code: error.code, param: error.param, headers });
}

/** Headers for a RoutingFailure: where it ended and with how many retries. */
export function failureHeaders(failure: RoutingFailure, provider: string | undefined): Record<string, string> {
  return routingHeaders(failure.leaf.path, failure.retries, provider);
}

/** A config without a provider of its own (only guardrails, say) on a request that names none either. */
const missingProvider = () =>
  badRequest(
    "No provider selected: the config names no provider, so send x-gateway-provider (or a virtual key) with it.",
    "x-gateway-provider",
    "missing_provider",
  );
