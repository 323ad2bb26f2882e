import type { Client, ClientCapabilities } from "@modelcontextprotocol/client";
import type { Principal } from "../../../auth/principal.ts";
import type { RequestContext } from "../../../services.ts";
import { HttpError, upstreamTooLargeIn } from "../../../http/errors.ts";
import { parseGatewayHeaders } from "../../../http/gateway-headers.ts";
import { readText } from "../../../http/json.ts";
import { type McpTarget, resolveMcpTarget } from "./access.ts";
import { authenticateMcpCaller, checkOrigin } from "./caller.ts";
import { keepAliveWhileWaiting } from "./keep-alive.ts";
import { admitMcpToolCall } from "./limits.ts";
import { type ProxyHooks, type UpstreamIdentity, buildProxyServer } from "./proxy-server.ts";
import { type McpRoute, routeOf } from "./request-route.ts";
import { TASKS_EXTENSION, type TaskContext, taskRunner } from "../tasks/handlers.ts";
import { McpTaskStore, type TaskOwner } from "../tasks/store.ts";
import { type McpRequestRecord, writeMcpLog } from "./request-log.ts";
import { McpToolError } from "../tool-host.ts";
import { upstreamAuthHeaders } from "../upstream/auth.ts";
import { closeUpstream, connectUpstream, upstreamFailureOf } from "../upstream/client.ts";
import { withUpstreamStatus } from "../upstream/status.ts";
import { loadOnce } from "../../../util/load-once.ts";

/** The MCP server SDK, loaded with the first request and kept (a dynamic import per request ran the loader). */
const mcpServerSdk = loadOnce(() => import("@modelcontextprotocol/server"));

/**
 * `POST|GET|DELETE /mcp/:server`: one MCP server through the gateway, on both protocol eras, served per request
 * by the SDK's createMcpHandler (no session, so any instance or Lambda serves any request): a 2025-11-25 client
 * (initialize, then stateless POSTs) and a 2026-07-28 one (no handshake, per-request `_meta`, `Mcp-Method` /
 * `Mcp-Name` headers) alike, whatever era the upstream speaks (the upstream client negotiates its own). Per
 * request: the caller is authenticated (401 with the protected-resource challenge), the server resolved in the
 * caller's workspace (404) and its access checked (403), the body read and parsed once, then an SDK `Server`
 * built whose handlers forward to the upstream with the stored credentials (proxy-server.ts). The caller's own
 * credentials never go upstream; the upstream's never come back.
 *
 * A lone `tools/call` is checked before the SDK runs (its tool named by `Mcp-Name` on the 2026 wire), so a hidden
 * tool or a rate-limit refusal answers with its own HTTP status (200 with a JSON-RPC error, 429); the handlers
 * check again what the body names. Each request writes one log (request-log.ts).
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
    // Stateless on both eras: no session to stream server-initiated messages on (GET) or to end (DELETE).
    record.method = request.method === "GET" ? "(sse stream)" : "(end session)";
    return log(
      jsonRpcError(405, null, -32000, "Method not allowed: this MCP server is stateless; send requests with POST.", {
        allow: "POST",
      }),
    );
  }

  const text = await readText(request, services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return log(jsonRpcError(400, null, -32700, "Parse error: the body is not JSON."));
  }
  const messages = (Array.isArray(body) ? body : [body]) as Array<Record<string, unknown> | null>;
  if (messages.length === 0 || messages.some((message) => !message || typeof message !== "object")) {
    return log(jsonRpcError(400, null, -32600, "Invalid Request: send a JSON-RPC message or a non-empty batch."));
  }
  const route = routeOf(request.headers, messages);
  record.method = route.method;
  if (route.name !== undefined) record.name = route.name;

  const single = messages.length === 1 ? messages[0] : undefined;
  const admit = (name: string) =>
    admitMcpToolCall(services, principal, target, {
      waitUntil: ctx.waitUntil,
      metadata: { ...ctx.gateway?.metadata, mcp_tool: name },
    });
  const refused = await refuseLoneToolCall(single, route, target, record, admit);
  if (refused) return log(refused.response);
  return forward(request, ctx, { principal, target, record, route, body, preAdmitted: refused === null, admit, log });
}

interface Forwarded {
  principal: Principal;
  target: McpTarget;
  record: McpRequestRecord;
  route: McpRoute;
  body: unknown;
  /** Whether the lone tool call was already admitted (counted) before the SDK ran. */
  preAdmitted: boolean;
  admit(name: string): Promise<void>;
  log(response: Response): Response;
}

/**
 * A lone tool call, checked before the SDK runs: a hidden tool answers its JSON-RPC error, a refused one its
 * HTTP status (429). Answers the refusal, null when the call was admitted, undefined when it is not a lone call.
 */
async function refuseLoneToolCall(
  single: Record<string, unknown> | null | undefined,
  route: McpRoute,
  target: McpTarget,
  record: McpRequestRecord,
  admit: (name: string) => Promise<void>,
): Promise<{ response: Response } | null | undefined> {
  const wellFormed = single?.jsonrpc === "2.0" && (typeof single.id === "string" || typeof single.id === "number");
  if (!wellFormed || route.method !== "tools/call") return undefined;
  const params = (single.params ?? {}) as { name?: unknown; arguments?: unknown };
  // Headers that disagree with the body are the SDK's to refuse (HeaderMismatch, 400), before any check of ours.
  if (route.era === "modern" && route.name !== params.name) return undefined;
  const name = route.name ?? (typeof params.name === "string" ? params.name : "");
  record.name = name;
  record.arguments = params.arguments ?? {};
  if (!target.allowed.tools.has(name)) {
    record.error = { message: `Tool '${name}' is not available on this MCP server.`, code: "mcp_tool_hidden" };
    return { response: jsonRpcError(200, single.id, -32602, `MCP error -32602: ${record.error.message}`) };
  }
  try {
    await admit(name);
    return null;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    record.error = { message: error.message, code: error.code };
    return { response: jsonRpcError(error.status, single.id, -32000, error.message, error.headers) };
  }
}

/** The SDK's answer for the request, from a proxy server whose handlers forward upstream. */
async function forward(request: Request, ctx: RequestContext, forwarded: Forwarded): Promise<Response> {
  const { services } = ctx;
  const { principal, target, record, route, log } = forwarded;
  const upstream = lazyUpstream(ctx, principal, target, callerCapabilities(forwarded.body));
  let identity: UpstreamIdentity | undefined;
  // The handshake of either era (initialize, server/discover) announces the upstream's own identity.
  if (/(^|,)(initialize|server\/discover)(,|$)/.test(route.method)) {
    try {
      const client = await upstream.get();
      identity = {
        capabilities: client.getServerCapabilities() ?? {},
        serverInfo: client.getServerVersion() ?? { name: target.server.slug, version: "1.0.0" },
        instructions: client.getInstructions(),
      };
    } catch (error) {
      await upstream.close();
      const failure = upstreamFailure(error);
      record.error = { message: failure.message, code: failure.code };
      const single = Array.isArray(forwarded.body) ? undefined : (forwarded.body as { id?: string | number });
      return log(jsonRpcError(502, single?.id ?? null, -32603, failure.message));
    }
  }
  const background: Array<Promise<unknown>> = [];
  const tasks: TaskContext = {
    store: new McpTaskStore(services.stores.records, services.stores.blobs),
    organisationId: principal.organisationId,
    owner: taskOwner(principal, target),
    afterMs: services.settings.MCP_TASK_AFTER_MS,
    ttlMs: services.settings.MCP_TASK_TTL_MS,
    background: (work) => void background.push(work.catch(() => {})),
  };
  const hooks = proxyHooks(ctx, forwarded, upstream, tasks);
  const { createMcpHandler } = await mcpServerSdk.get();
  let failure: Error | undefined;
  const handler = createMcpHandler(() => buildProxyServer(hooks, identity), {
    legacy: "stateless",
    // The SDK's own event streams (2025-era answers, 2026 ones once the upstream notifies) beat as ours do.
    keepAliveMs: services.settings.MCP_SSE_KEEPALIVE_MS,
    onerror: (error) => {
      failure ??= error;
    },
  });
  const cleanUp = () => {
    ctx.waitUntil(
      Promise.allSettled(background).then(async () => {
        await handler.close().catch(() => {});
        await upstream.close();
      }),
    );
  };
  const answer = handler.fetch(request, { parsedBody: forwarded.body }).then((response) =>
    // A lone request's error for an upstream answer too large is answered with HTTP 502 (upstream/status.ts).
    isLoneRequest(forwarded.body) ? withUpstreamStatus(response) : response,
  );
  let answered: Response;
  try {
    // An answer that takes longer than MCP_SSE_KEEPALIVE_MS (a long tool call) streams comments meanwhile, so no
    // proxy's read timeout (CloudFront's 60 s) cuts it (keep-alive.ts).
    answered = acceptsEventStream(request)
      ? await keepAliveWhileWaiting(answer, {
          intervalMs: services.settings.MCP_SSE_KEEPALIVE_MS,
          lateFailure: (error) => {
            record.error ??= { message: error instanceof Error ? error.message : String(error), code: "mcp_error" };
            return lateFailure(forwarded.body);
          },
        })
      : await answer;
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

function acceptsEventStream(request: Request): boolean {
  return (request.headers.get("accept") ?? "").toLowerCase().includes("text/event-stream");
}

/** The JSON-RPC error for a request whose answer failed after its event stream was committed (the log has why). */
function lateFailure(body: unknown) {
  const id = isLoneRequest(body) ? (body as { id: string | number }).id : null;
  return { jsonrpc: "2.0", id, error: { code: -32603, message: "Internal error: the answer could not be completed." } };
}

function isLoneRequest(body: unknown): boolean {
  const message = body as { jsonrpc?: unknown; id?: unknown } | null;
  return (
    !Array.isArray(body) &&
    message?.jsonrpc === "2.0" &&
    (typeof message.id === "string" || typeof message.id === "number")
  );
}

function proxyHooks(ctx: RequestContext, forwarded: Forwarded, upstream: LazyUpstream, tasks: TaskContext): ProxyHooks {
  const { target, record } = forwarded;
  return {
    upstream: async () => {
      try {
        return await upstream.get();
      } catch (error) {
        // An answer too large while connecting is told as such (forwarding.ts gives it its code).
        if (upstreamTooLargeIn(error)) throw error;
        const { ProtocolError } = await import("@modelcontextprotocol/server");
        throw new ProtocolError(-32603, upstreamFailure(error).message);
      }
    },
    explain: (error) => upstreamFailureOf(upstream.client, error),
    allowed: target.allowed,
    timeoutMs: ctx.services.settings.MCP_UPSTREAM_TIMEOUT_MS,
    admitToolCall: async (name) => {
      if (forwarded.preAdmitted) return;
      try {
        await forwarded.admit(name);
      } catch (error) {
        if (!(error instanceof HttpError)) throw error;
        const { ProtocolError } = await import("@modelcontextprotocol/server");
        throw new ProtocolError(-32000, error.message);
      }
    },
    note: (details) => Object.assign(record, details),
    runAsTask: taskRunner(tasks),
    tasks,
  };
}

function taskOwner(principal: Principal, target: McpTarget): TaskOwner {
  return {
    serverId: target.server.id,
    workspaceId: target.server.workspaceId,
    ...(principal.keyId ? { keyId: principal.keyId } : {}),
    ...(principal.userId ? { userId: principal.userId } : {}),
  };
}

type LazyUpstream = ReturnType<typeof lazyUpstream>;

/**
 * What a 2026-07-28 caller declared it can do (its request's `_meta`), declared in turn to the upstream, so an
 * upstream asking for input (`input_required`: elicitation, sampling, roots) asks only for what the caller can
 * give. The Tasks extension stays the gateway's: the gateway runs tasks itself and its client takes none.
 */
function callerCapabilities(body: unknown): ClientCapabilities | undefined {
  if (Array.isArray(body)) return undefined;
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const declared = meta?.["io.modelcontextprotocol/clientCapabilities"];
  if (!declared || typeof declared !== "object") return undefined;
  const { extensions, ...rest } = declared as ClientCapabilities & { extensions?: Record<string, unknown> };
  const { [TASKS_EXTENSION]: _tasks, ...others } = extensions ?? {};
  return { ...rest, ...(Object.keys(others).length > 0 ? { extensions: others } : {}) } as ClientCapabilities;
}

/** The upstream client of one request: connected on first use, closed when the request ends. */
function lazyUpstream(ctx: RequestContext, principal: Principal, target: McpTarget, capabilities?: ClientCapabilities) {
  let connecting: Promise<Client> | undefined;
  const upstream = {
    /** Once connected. */
    client: undefined as Client | undefined,
    get(): Promise<Client> {
      connecting ??= upstreamAuthHeaders(ctx.services, target.integration, {
        server: target.server,
        userId: principal.userId,
        signal: ctx.signal,
      })
        .then((headers) => connectUpstream(ctx.services, target.integration, headers, ctx.signal, capabilities))
        .then((client) => {
          upstream.client = client;
          return client;
        });
      return connecting;
    },
    async close(): Promise<void> {
      const client = await connecting?.catch(() => undefined);
      if (client) await closeUpstream(client);
    },
  };
  return upstream;
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
