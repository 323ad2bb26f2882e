import type { AgentCard } from "@a2a-js/sdk";
import { newOutcome } from "../gateway/outcome.ts";
import type { RequestContext } from "../http/context.ts";
import { type HttpError, UPSTREAM_TOO_LARGE } from "../http/errors.ts";
import { json, readText } from "../http/json.ts";
import { withHeaders } from "../http/response-headers.ts";
import type { AgentCardJson } from "./card-rules.ts";
import { ForwardingRequestHandler } from "./forwarding-handler.ts";
import { gatewayAgentCard } from "./gateway-card.ts";
import { loadVisibleAgent, openHeaders } from "./integrations-service.ts";
import type { AgentIntegration } from "./records.ts";
import { type RpcCall, type RpcEnvelope, answerRpc, readRpcCall } from "./rpc-endpoint.ts";
import { upstreamFetch, upstreamTransport } from "./upstream.ts";

/**
 * The gateway as an A2A agent (`/v1/agents/:agent`): the agent must be one the caller's workspace may use (else
 * 404, as for an unknown one). Each call is admitted by the rate-limit and usage-limit policies (provider `a2a`,
 * model = the agent's slug) and logged like an inference request, with its JSON-RPC method in the log's
 * metadata (`a2a_method`).
 */

export const A2A_PROVIDER = "a2a";
/** Events of a stream kept for the log (when bodies are logged). */
const LOGGED_EVENTS = 200;

function endpointOf(request: Request, ctx: RequestContext, agent: AgentIntegration): string {
  const base = ctx.services.settings.GATEWAY_PUBLIC_URL?.replace(/\/+$/, "") ?? new URL(request.url).origin;
  return `${base}/v1/agents/${encodeURIComponent(agent.slug)}`;
}

function loadAgent(ctx: RequestContext) {
  return loadVisibleAgent(ctx.services.stores, ctx.principal!, ctx.params.agent!);
}

/** `GET /v1/agents/:agent/.well-known/agent-card.json` */
export async function serveAgentCard(request: Request, ctx: RequestContext): Promise<Response> {
  const agent = await loadAgent(ctx);
  return json(gatewayAgentCard(agent.agent_card as AgentCardJson, endpointOf(request, ctx, agent)));
}

/** `POST /v1/agents/:agent`: one A2A JSON-RPC call, forwarded upstream. */
export async function invokeAgent(request: Request, ctx: RequestContext): Promise<Response> {
  const { services } = ctx;
  const agent = await loadAgent(ctx);
  const text = await readText(request, services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const call = readRpcCall(text);
  // The method travels in the request's metadata: logs show it and policies may match on it.
  if (ctx.gateway)
    ctx.gateway = { ...ctx.gateway, metadata: { ...ctx.gateway.metadata, a2a_method: call.method ?? "(invalid)" } };
  // An A2A call is relayed as it comes, like the generic pass-through.
  const outcome = newOutcome("passthrough", agent.slug, false);
  outcome.provider = A2A_PROVIDER;
  outcome.requestBody = call.body;
  outcome.requestChars = text.length;
  ctx.outcome = outcome;
  try {
    const admission = await services.policies.admitRequest(ctx, A2A_PROVIDER);
    const headers = agent.headers ? await openHeaders(services.stores.secrets, agent.headers) : {};
    const transport = await upstreamTransport(
      agent.agent_card,
      upstreamFetch(services.trustedHosts, headers, services.settings.AGENT_MAX_RESPONSE_BYTES),
    );
    const card = gatewayAgentCard(agent.agent_card as AgentCardJson, endpointOf(request, ctx, agent));
    const handler = new ForwardingRequestHandler(
      transport,
      card as unknown as AgentCard,
      ctx.signal,
      services.settings.REQUEST_TIMEOUT,
    );
    const events: RpcEnvelope[] = [];
    const response = await answerRpc(call, handler, {
      answered(envelope, stream) {
        outcome.stream = stream;
        outcome.upstreamFirstByteMs = performance.now() - ctx.startedAt;
        if (stream) events.push(envelope);
        else outcome.responseBody = envelope;
        if (envelope.error) outcome.error = rpcErrorOf(envelope.error);
      },
      streamed(envelope) {
        if (events.length < LOGGED_EVENTS) events.push(envelope);
        if (envelope.error) outcome.error = rpcErrorOf(envelope.error);
      },
      ended(error) {
        if (error && !outcome.error) outcome.error = rpcErrorOf(error);
        if (outcome.stream) outcome.responseBody = events;
        outcome.status = 200;
        outcome.totalMs = performance.now() - ctx.startedAt;
        outcome.finish();
      },
    });
    return withHeaders(
      handler.upstreamTooLarge ? tooLargeAnswer(call, handler.upstreamTooLarge) : response,
      admission.headers,
    );
  } catch (error) {
    const status = (error as { status?: number }).status ?? 500;
    outcome.error = { status, message: (error as Error).message, code: (error as { code?: string }).code ?? null };
    outcome.finish();
    throw error;
  }
}

/**
 * A unary call whose upstream answer was too large: the JSON-RPC error with HTTP 502 (a gateway's answer for an
 * upstream it could not use), its data an A2A ErrorInfo whose metadata names the code.
 */
function tooLargeAnswer(call: RpcCall, error: HttpError): Response {
  const info = {
    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
    reason: "UPSTREAM_RESPONSE_TOO_LARGE",
    domain: "ai-gateway",
    metadata: { code: UPSTREAM_TOO_LARGE },
  };
  const envelope = { jsonrpc: "2.0", id: call.id, error: { code: -32603, message: error.message, data: [info] } };
  return new Response(JSON.stringify(envelope), { status: 502, headers: { "content-type": "application/json" } });
}

/** A JSON-RPC error as the status its log records (the HTTP answer itself is 200, as JSON-RPC has it). */
export function rpcErrorOf(error: NonNullable<RpcEnvelope["error"]>) {
  return { status: statusOfRpcError(error.code), message: error.message, code: String(error.code) };
}

export function statusOfRpcError(code: number): number {
  switch (code) {
    case -32700:
    case -32600:
    case -32602:
    case -32003:
    case -32004:
    case -32007:
      return 400;
    case -32601:
    case -32001:
      return 404;
    case -32002:
      return 409;
    case -32005:
      return 415;
    case -32006:
    case -32603:
      return 502;
    case -32000:
      return 499;
    default:
      return 500;
  }
}
