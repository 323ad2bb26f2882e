import { authenticate } from "../../auth/authenticate.ts";
import { DomainError } from "../../control/errors.ts";
import { newOutcome } from "../gateway/outcome.ts";
import {
  LeafResolver,
  failureHeaders,
  recordFailure,
  recordedAttempt,
  routingHeaders,
  upstreamToHttp,
} from "../gateway/plan.ts";
import type { RequestContext, Services } from "../../services.ts";
import { httpErrorOf } from "../../http/domain-errors.ts";
import { HttpError, errorResponse } from "../../http/errors.ts";
import { TRACE_ID_HEADER, parseGatewayHeaders, traceIdOf } from "../../http/gateway-headers.ts";
import { logRequest } from "../../observe/logs/log-request.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { RoutingFailure, runStrategy } from "../routing/engine.ts";
import { requireRouting } from "../routing/source.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
import { realtimeCost } from "./cost.ts";
import { type RelayEnd, relaySession } from "./relay.ts";
import type { RelaySocket } from "./socket.ts";
import { type UpstreamSocketRequest, realtimeUpstream, requestedRealtimeModel } from "./upstream.ts";
import { RealtimeUsageMeter, chatUsageOf } from "./usage.ts";

/** What the platform's connector gets: where to connect, and the bounds of the attempt. */
export interface UpstreamConnectRequest extends UpstreamSocketRequest {
  timeoutMs: number;
  trusted: TrustedHosts;
  signal: AbortSignal;
  maxMessageBytes: number;
}

/**
 * Opens the provider's WebSocket (the platform's, e.g. core/platform/node/ws-connect.ts): resolves once it is
 * open; throws an UpstreamError when the provider refused the upgrade (its status) or could not be reached.
 */
export type RealtimeConnector = (request: UpstreamConnectRequest) => Promise<RelaySocket>;

export interface RealtimePlatform {
  /** The realtime route's path (the route table's `realtime` family): what the session's log records. */
  path: string;
  connect: RealtimeConnector;
  waitUntil(work: Promise<unknown>): void;
  /** Aborted when the client's connection closes before the session is accepted. */
  signal: AbortSignal;
}

export type RealtimeOpening =
  | { accepted: false; response: Response }
  | {
      accepted: true;
      /** Headers for the client's 101 answer: trace id, routing and rate-limit headers. */
      headers: Record<string, string>;
      /** Relays the session with the client's socket; resolves when it has ended (its log is then written). */
      start(client: RelaySocket): Promise<RelayEnd>;
      /** The client left before its socket was accepted: closes the provider's socket, logs a 499. */
      abandon(): void;
    };

/**
 * Connect time of a realtime session (`GET /v1/realtime` with `Upgrade: websocket`), done before the client's
 * upgrade is accepted so that every refusal is an HTTP answer in OpenAI's error shape (a WebSocket client shows
 * the status; after the upgrade only a close code could say it):
 * 1. authentication exactly as on HTTP routes (x-gateway-api-key or a JWT): 401;
 * 2. the provider resolved as for inference: x-gateway-provider + Authorization, @slug integrations and virtual
 *    keys, x-gateway-config (fallback tries its targets in order until one accepts the upgrade; loadbalance and
 *    conditional choose as on chat; retries apply), custom hosts SSRF-checked: 400;
 * 3. rate and usage policies admitted at connect (one request; tokens and cost settled when the session ends): 429;
 * 4. the provider's WebSocket opened: its refusal answered with its status and message.
 * A session then relays every event both ways (relay.ts) and writes ONE request log when it ends: status 101,
 * the summed usage of its `response.done` events, their cost, the duration, and the close when abnormal.
 */
export async function openRealtimeSession(
  request: Request,
  services: Services,
  platform: RealtimePlatform,
): Promise<RealtimeOpening> {
  const url = new URL(request.url);
  const route = { path: platform.path };
  const ctx: RequestContext = {
    traceId: traceIdOf(request.headers),
    path: platform.path,
    params: {},
    services,
    signal: platform.signal,
    waitUntil: platform.waitUntil,
    startedAt: performance.now(),
  };
  const refuse = (error: HttpError): RealtimeOpening => ({
    accepted: false,
    response: errorResponse(error, { [TRACE_ID_HEADER]: ctx.traceId }),
  });
  try {
    ctx.principal = await authenticate(request.headers, services);
    ctx.gateway = parseGatewayHeaders(request.headers, ctx.traceId);
  } catch (error) {
    // No principal, no log (as on HTTP routes).
    return refuse(asHttpError(error, ctx.traceId));
  }
  const outcome = newOutcome("passthrough", requestedRealtimeModel(undefined, url), true);
  ctx.outcome = outcome;
  const { result, opened, provider } = await connectUpstream(request, url, ctx, platform);

  if (!(result && "leaf" in result) || !opened) {
    recordFailure(outcome, result);
    const error =
      result instanceof RoutingFailure
        ? upstreamToHttp(result.error, failureHeaders(result, provider))
        : asHttpError(result, ctx.traceId, ctx.signal);
    const response = errorResponse(error, { [TRACE_ID_HEADER]: ctx.traceId });
    ctx.waitUntil(logRequest(request, response, route, ctx));
    return { accepted: false, response };
  }

  const { socket: upstream, target } = opened;
  outcome.provider = target.provider;
  outcome.status = 101;
  outcome.retries = result.retries;
  outcome.lastUsedOptionIndex = result.leaf.path;
  outcome.upstreamFirstByteMs = performance.now() - ctx.startedAt;
  const headers = {
    [TRACE_ID_HEADER]: ctx.traceId,
    ...routingHeaders(result.leaf.path, result.retries, target.provider),
    ...services.policies?.headersFor(ctx),
  };

  const finish = async (end: RelayEnd | undefined, meter: RealtimeUsageMeter | undefined) => {
    await settleOutcome(outcome, ctx, target, end, meter);
    await logRequest(request, new Response(null, { status: 200 }), route, ctx);
  };

  return {
    accepted: true,
    headers,
    async start(client) {
      const meter = new RealtimeUsageMeter();
      const settings = services.settings;
      const end = await relaySession(
        client,
        upstream,
        {
          idleMs: settings.GATEWAY_REALTIME_IDLE_SECONDS * 1000,
          maxSessionMs: settings.GATEWAY_REALTIME_MAX_SESSION_SECONDS * 1000,
          maxBufferedBytes: settings.GATEWAY_REALTIME_MAX_BUFFERED_BYTES,
        },
        { upstreamMessage: (data, binary) => meter.observe(data, binary) },
      );
      ctx.waitUntil(finish(end, meter));
      return end;
    },
    abandon() {
      upstream.close(1001, "client went away");
      ctx.waitUntil(finish(undefined, undefined));
    },
  };
}

/**
 * Steps 2 to 4: the routing strategy over the request's targets, each leaf admitted by the policies and its
 * provider's WebSocket opened through the platform; the first that accepts is the session's upstream.
 */
async function connectUpstream(
  request: Request,
  url: URL,
  ctx: RequestContext,
  platform: RealtimePlatform,
): Promise<{
  result: Awaited<ReturnType<typeof runStrategy>> | Error;
  opened?: { socket: RelaySocket; target: ProviderTarget };
  provider?: string;
}> {
  const { services } = ctx;
  const gateway = ctx.gateway!;
  const outcome = ctx.outcome!;
  let provider: string | undefined;
  let opened: { socket: RelaySocket; target: ProviderTarget } | undefined;
  const result = await (async () => {
    const config = await requireRouting(gateway, ctx);
    const resolver = new LeafResolver(request, gateway, ctx);
    return runStrategy(config, {
      signal: ctx.signal,
      queryContext: () => ({
        metadata: gateway.metadata ?? {},
        params: { model: outcome.requestedModel },
        url: { pathname: url.pathname },
      }),
      async call(leaf, retry) {
        const resolved = await resolver.resolve(leaf);
        const target = resolved.target;
        provider = target.provider;
        outcome.requestedModel ||= requestedRealtimeModel(target, url);
        await services.policies?.admitRequest(ctx, provider);
        return recordedAttempt(outcome, { path: leaf.path, provider, retry }, async () => {
          const socket = await platform.connect({
            ...realtimeUpstream(target, url, request.headers),
            timeoutMs: resolved.timeoutMs,
            trusted: services.trustedHosts,
            signal: ctx.signal,
            maxMessageBytes: services.settings.GATEWAY_REALTIME_MAX_MESSAGE_BYTES,
          });
          opened = { socket, target };
          // The strategy engine speaks Responses: this one only says the upgrade succeeded.
          return new Response(null, { status: 200 });
        });
      },
    });
  })().catch((error: unknown) => error as Error);
  return { result, opened, provider };
}

/**
 * A session's outcome when it ends: its duration, the usage and cost of its `response.done` events, and how it
 * ended when abnormally (a client gone before the upgrade, a close that is not normal, a close by the gateway).
 */
async function settleOutcome(
  outcome: NonNullable<RequestContext["outcome"]> & { finish(): void },
  ctx: RequestContext,
  target: ProviderTarget,
  end: RelayEnd | undefined,
  meter: RealtimeUsageMeter | undefined,
): Promise<void> {
  outcome.totalMs = performance.now() - ctx.startedAt;
  if (meter?.model) outcome.answeredModel = meter.model;
  if (meter && meter.usage.responses > 0) {
    outcome.usage = chatUsageOf(meter.usage);
    outcome.cost = await realtimeCost(
      target.provider,
      outcome.answeredModel ?? outcome.requestedModel,
      meter.usage,
    ).catch(() => undefined);
  }
  if (!end) {
    outcome.status = 499;
    outcome.error = {
      status: 499,
      message: "The client left before the session was accepted.",
      code: "client_closed_request",
    };
  } else if (!NORMAL_CLOSES.has(end.code) || end.by === "gateway") {
    const by = end.by === "gateway" ? "the gateway" : `the ${end.by === "client" ? "client" : "provider"}`;
    // The session ran (status 101); how it ended abnormally is the log's error.
    outcome.error = {
      status: 101,
      message: `Session closed by ${by} with code ${end.code}${end.reason ? `: ${end.reason}` : ""}`,
      code: `websocket_close_${end.code}`,
    };
  }
  outcome.finish();
}

/** Closes that are no failure: normal, going away, and a close without a code. */
const NORMAL_CLOSES = new Set([1000, 1001, 1005]);

/** Anything thrown at connect time as the client's HTTP answer (never a stack or an internal message). */
function asHttpError(error: unknown, traceId: string, signal?: AbortSignal): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DomainError) return httpErrorOf(error);
  if (signal?.aborted) return new HttpError(499, "The client closed the request.", { code: "client_closed_request" });
  console.error(`[${traceId}] realtime connect failed`, error);
  return new HttpError(500, `Internal server error (trace id ${traceId}).`, { code: "internal_error" });
}
