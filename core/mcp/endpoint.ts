import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Principal } from "../auth/principal.ts";
import type { RequestContext } from "../http/context.ts";
import { HttpError, upstreamTooLargeIn } from "../http/errors.ts";
import { parseGatewayHeaders } from "../http/gateway-headers.ts";
import { readText } from "../http/json.ts";
import { type McpTarget, resolveMcpTarget } from "./access.ts";
import { authenticateMcpCaller, checkOrigin } from "./caller.ts";
import { admitMcpToolCall } from "./limits.ts";
import { type UpstreamIdentity, buildProxyServer } from "./proxy-server.ts";
import { type McpRequestRecord, writeMcpLog } from "./request-log.ts";
import { McpToolError } from "./tool-host.ts";
import { upstreamAuthHeaders } from "./upstream-auth.ts";
import { withUpstreamStatus } from "./upstream-status.ts";
import { closeUpstream, connectUpstream, upstreamFailureOf } from "./upstream-client.ts";

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
  const limitContext = { waitUntil: ctx.waitUntil, metadata: ctx.gateway.metadata };
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
  record.method = messages.map(methodOf).join(",") || "-";

  // A lone tool call: refuse a hidden tool or a rate-limited call with an HTTP status of its own.
  const single = messages.length === 1 ? messages[0] : undefined;
  let preAdmitted = false;
  const wellFormed = single?.jsonrpc === "2.0" && (typeof single.id === "string" || typeof single.id === "number");
  if (wellFormed && single?.method === "tools/call") {
    const params = (single.params ?? {}) as { name?: unknown; arguments?: unknown };
    const name = typeof params.name === "string" ? params.name : "";
    record.name = name;
    record.arguments = params.arguments ?? {};
    if (!target.allowed.tools.has(name)) {
      record.error = { message: `Tool '${name}' is not available on this MCP server.`, code: "mcp_tool_hidden" };
      return log(jsonRpcError(200, single.id, -32602, `MCP error -32602: ${record.error.message}`));
    }
    try {
      await admitMcpToolCall(services, principal, target, limitContext);
      preAdmitted = true;
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      record.error = { message: error.message, code: error.code };
      return log(jsonRpcError(error.status, single.id, -32000, error.message, error.headers));
    }
  }

  const upstream = lazyUpstream(ctx, principal, target);
  let identity: UpstreamIdentity | undefined;
  if (messages.some((message) => message?.method === "initialize")) {
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
      const id = single && single.id !== undefined ? (single.id as string | number) : null;
      return log(jsonRpcError(502, id, -32603, failure.message));
    }
  }

  const server = await buildProxyServer(
    {
      upstream: async () => {
        try {
          return await upstream.get();
        } catch (error) {
          // An answer too large while connecting is told as such (proxy-server.ts gives it its code).
          if (upstreamTooLargeIn(error)) throw error;
          const { McpError } = await import("@modelcontextprotocol/sdk/types.js");
          throw new McpError(-32603, upstreamFailure(error).message);
        }
      },
      explain: (error) => upstreamFailureOf(upstream.client, error),
      allowed: target.allowed,
      timeoutMs: services.settings.MCP_UPSTREAM_TIMEOUT_MS,
      admitToolCall: async () => {
        if (preAdmitted) return;
        try {
          await admitMcpToolCall(services, principal, target, limitContext);
        } catch (error) {
          if (!(error instanceof HttpError)) throw error;
          const { McpError } = await import("@modelcontextprotocol/sdk/types.js");
          throw new McpError(-32000, error.message);
        }
      },
      note: (details) => Object.assign(record, details),
    },
    identity,
  );
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
  // The SDK's answer for this request: the caller's JSON-RPC errors are in it; the log notes the first.
  let answered: Response;
  try {
    answered = await transport.handleRequest(request, { parsedBody: body });
    if (wellFormed) answered = await withUpstreamStatus(answered);
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
function lazyUpstream(ctx: RequestContext, principal: Principal, target: McpTarget) {
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
        .then((headers) => connectUpstream(ctx.services, target.integration, headers, ctx.signal))
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
