import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Principal } from "../../../auth/principal.ts";
import type { RequestContext } from "../../../services.ts";
import { HttpError } from "../../../http/errors.ts";
import { parseGatewayHeaders } from "../../../http/gateway-headers.ts";
import { readText } from "../../../http/json.ts";
import { type McpTarget, resolveMcpTarget } from "./access.ts";
import { authenticateMcpCaller, checkOrigin } from "./caller.ts";
import { admitMcpToolCall } from "./limits.ts";
import { type ProxyHooks, type UpstreamIdentity, buildProxyServer } from "./proxy-server.ts";
import { type McpRequestRecord, writeMcpLog } from "./request-log.ts";
import { McpToolError } from "../tool-host.ts";
import { upstreamAuthHeaders } from "../upstream/auth.ts";
import { closeUpstream, connectUpstream } from "../upstream/client.ts";

/**
 * `POST|GET|DELETE /mcp/:server`: one MCP server through the gateway, over the streamable HTTP transport in
 * stateless mode (the SDK's WebStandardStreamableHTTPServerTransport; no session, so any instance or Lambda
 * serves any request). Per request: the caller is authenticated (401 with the protected-resource challenge),
 * the server resolved in the caller's workspace (404) and its access checked (403), then an SDK `Server` built
 * whose handlers forward to the upstream through an SDK `Client` with the stored credentials
 * (proxy-server.ts). The caller's own credentials never go upstream; the upstream's never come back.
 *
 * A lone `tools/call` is checked before the transport runs, so a hidden tool or a rate-limit refusal can
 * answer with its own HTTP status (200 with a JSON-RPC error, 429); inside a batch the same checks run in the
 * handler and answer JSON-RPC errors. Each request writes one log (request-log.ts).
 */
export async function serveMcpRequest(request: Request, ctx: RequestContext): Promise<Response> {
  const { services } = ctx;
  const serverRef = ctx.params.server ?? "";
  checkOrigin(request, services);
  const principal = await authenticateMcpCaller(request, services, serverRef);
  const target = await resolveMcpTarget(services, principal, serverRef).catch(rethrowAsHttp);
  // x-gateway-metadata and the span headers, as on every other route (400 when malformed).
  ctx.gateway = parseGatewayHeaders(request.headers, ctx.traceId);
  const record: McpRequestRecord = { method: "-", status: 0 };
  const log = (response: Response) => {
    record.status ||= response.status;
    ctx.waitUntil(
      writeMcpLog(services, principal, target.server, record, {
        traceId: ctx.traceId,
        gateway: ctx.gateway,
        startedAt: ctx.startedAt,
        httpMethod: request.method,
        path: ctx.path ?? new URL(request.url).pathname,
        route: "/mcp/:server",
      }),
    );
    return response;
  };

  if (request.method !== "POST") {
    // Stateless: no session to stream server-initiated messages on (GET) or to end (DELETE).
    record.method = request.method === "GET" ? "(sse stream)" : "(end session)";
    return log(
      jsonRpcError(405, null, -32000, "Method not allowed: this MCP server is stateless; send requests with POST.", {
        allow: "POST",
      }),
    );
  }
  const read = await readMessages(request, ctx);
  if (read instanceof Response) return log(read);
  const { body, messages } = read;
  record.method = messages.map(methodOf).join(",") || "-";
  const call: McpCall = {
    ctx,
    principal,
    target,
    record,
    limits: { waitUntil: ctx.waitUntil, metadata: ctx.gateway.metadata },
  };
  const single = messages.length === 1 ? messages[0] : undefined;
  const admitted = await admitLoneToolCall(call, single);
  if (admitted instanceof Response) return log(admitted);
  const upstream = lazyUpstream(ctx, principal, target);
  const identity = await initializeIdentity(call, messages, single, upstream);
  if (identity instanceof Response) return log(identity);
  const server = await buildProxyServer(proxyHooks(call, upstream, admitted), identity);
  return answerThroughTransport(server, request, body, upstream, record, log);
}

/** One MCP request's caller, server, log record and the context its tool-call limits are checked in. */
interface McpCall {
  ctx: RequestContext;
  principal: Principal;
  target: McpTarget;
  record: McpRequestRecord;
  limits: Parameters<typeof admitMcpToolCall>[3];
}

/** The body's JSON-RPC messages (a batch or one), or the JSON-RPC error a malformed body gets. */
async function readMessages(
  request: Request,
  ctx: RequestContext,
): Promise<{ body: unknown; messages: Array<Record<string, unknown> | null> } | Response> {
  const text = await readText(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return jsonRpcError(400, null, -32700, "Parse error: the body is not JSON.");
  }
  const messages = (Array.isArray(body) ? body : [body]) as Array<Record<string, unknown> | null>;
  if (messages.length === 0 || messages.some((message) => !message || typeof message !== "object")) {
    return jsonRpcError(400, null, -32600, "Invalid Request: send a JSON-RPC message or a non-empty batch.");
  }
  return { body, messages };
}

/**
 * A lone tool call: a hidden tool or a rate-limited call is refused with an HTTP status of its own (the answer
 * returned); otherwise whether the call was admitted here already (the handler then does not count it again).
 */
async function admitLoneToolCall(
  call: McpCall,
  single: Record<string, unknown> | null | undefined,
): Promise<boolean | Response> {
  const { ctx, principal, target, record } = call;
  const wellFormed = single?.jsonrpc === "2.0" && (typeof single.id === "string" || typeof single.id === "number");
  if (!wellFormed || single?.method !== "tools/call") return false;
  const id = single.id as string | number;
  const params = (single.params ?? {}) as { name?: unknown; arguments?: unknown };
  const name = typeof params.name === "string" ? params.name : "";
  record.name = name;
  record.arguments = params.arguments ?? {};
  if (!target.allowed.tools.has(name)) {
    record.error = { message: `Tool '${name}' is not available on this MCP server.`, code: "mcp_tool_hidden" };
    return jsonRpcError(200, id, -32602, `MCP error -32602: ${record.error.message}`);
  }
  try {
    await admitMcpToolCall(ctx.services, principal, target, call.limits);
    return true;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    record.error = { message: error.message, code: error.code };
    return jsonRpcError(error.status, id, -32000, error.message, error.headers);
  }
}

/** For an `initialize`, the upstream's own capabilities and info (the gateway announces them); a 502 when it fails. */
async function initializeIdentity(
  call: McpCall,
  messages: Array<Record<string, unknown> | null>,
  single: Record<string, unknown> | null | undefined,
  upstream: LazyUpstream,
): Promise<UpstreamIdentity | undefined | Response> {
  if (!messages.some((message) => message?.method === "initialize")) return undefined;
  try {
    const client = await upstream.get();
    return {
      capabilities: client.getServerCapabilities() ?? {},
      serverInfo: client.getServerVersion() ?? { name: call.target.server.slug, version: "1.0.0" },
      instructions: client.getInstructions(),
    };
  } catch (error) {
    await upstream.close();
    const failure = upstreamFailure(error);
    call.record.error = { message: failure.message, code: failure.code };
    const id = single && single.id !== undefined ? (single.id as string | number) : null;
    return jsonRpcError(502, id, -32603, failure.message);
  }
}

/** What the proxy server's handlers do for this request: the upstream, the allow-list, limits and the log. */
function proxyHooks(call: McpCall, upstream: LazyUpstream, preAdmitted: boolean): ProxyHooks {
  const { ctx, principal, target, record } = call;
  return {
    upstream: async () => {
      try {
        return await upstream.get();
      } catch (error) {
        const { McpError } = await import("@modelcontextprotocol/sdk/types.js");
        throw new McpError(-32603, upstreamFailure(error).message);
      }
    },
    allowed: target.allowed,
    timeoutMs: ctx.services.settings.MCP_UPSTREAM_TIMEOUT_MS,
    admitToolCall: async () => {
      if (preAdmitted) return;
      try {
        await admitMcpToolCall(ctx.services, principal, target, call.limits);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        const { McpError } = await import("@modelcontextprotocol/sdk/types.js");
        throw new McpError(-32000, error.message);
      }
    },
    note: (details) => Object.assign(record, details),
  };
}

/**
 * The SDK's answer for this request through a stateless transport (the caller's JSON-RPC errors are in it; the
 * log notes the first); the transport, server and upstream are closed, and the log written, when its body ends.
 */
async function answerThroughTransport(
  server: Awaited<ReturnType<typeof buildProxyServer>>,
  request: Request,
  body: unknown,
  upstream: LazyUpstream,
  record: McpRequestRecord,
  log: (response: Response) => Response,
): Promise<Response> {
  const { WebStandardStreamableHTTPServerTransport } = await import(
    "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js"
  );
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  let failure: Error | undefined;
  server.onerror = (error) => {
    failure ??= error;
  };
  await server.connect(transport);
  const cleanUp = () => {
    void transport.close().catch(() => {});
    void server.close().catch(() => {});
    void upstream.close();
  };
  let answered: Response;
  try {
    answered = await transport.handleRequest(request, { parsedBody: body });
  } catch (error) {
    cleanUp();
    throw error;
  }
  return whenBodyEnds(answered, () => {
    if (failure && !record.error) record.error = { message: failure.message, code: "mcp_error" };
    cleanUp();
    log(answered);
  });
}

function methodOf(message: Record<string, unknown> | null): string {
  if (!message || typeof message !== "object") return "-";
  if (typeof message.method === "string") return message.method;
  return "result" in message || "error" in message ? "(response)" : "-";
}

/** The upstream client of one request: connected on first use, closed when the request ends. */
type LazyUpstream = ReturnType<typeof lazyUpstream>;

function lazyUpstream(ctx: RequestContext, principal: Principal, target: McpTarget) {
  let connecting: Promise<Client> | undefined;
  return {
    get(): Promise<Client> {
      connecting ??= upstreamAuthHeaders(ctx.services, target.integration, {
        server: target.server,
        userId: principal.userId,
        signal: ctx.signal,
      }).then((headers) => connectUpstream(ctx.services, target.integration, headers, ctx.signal));
      return connecting;
    },
    async close(): Promise<void> {
      const client = await connecting?.catch(() => undefined);
      if (client) await closeUpstream(client);
    },
  };
}

/** A message for a failed upstream connection that says what happened without any credential. */
function upstreamFailure(error: unknown): { message: string; code: string } {
  if (error instanceof McpToolError) return { message: error.message, code: error.code };
  if (error instanceof HttpError) return { message: error.message, code: error.code ?? "mcp_upstream_refused" };
  const reason = error instanceof Error ? error.message : String(error);
  return {
    message: `The upstream MCP server could not be reached: ${reason.slice(0, 300)}`,
    code: "mcp_upstream_error",
  };
}

function rethrowAsHttp(error: unknown): never {
  if (error instanceof McpToolError) throw new HttpError(error.status, error.message, { code: error.code });
  throw error;
}

function jsonRpcError(
  status: number,
  id: unknown,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify({ jsonrpc: "2.0", id: id ?? null, error: { code, message } }), {
    status,
    headers: { ...headers, "content-type": "application/json" },
  });
}

/** The same response, calling `done` once its body has been read to the end or cancelled (or at once: no body). */
function whenBodyEnds(response: Response, done: () => void): Response {
  if (!response.body) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  let finished = false;
  const finish = () => {
    if (finished) return;
    finished = true;
    done();
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (ended) {
          controller.close();
          finish();
        } else controller.enqueue(value);
      } catch (error) {
        controller.error(error);
        finish();
      }
    },
    cancel(reason) {
      finish();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
