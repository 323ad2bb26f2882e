import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  Implementation,
  ServerCapabilities,
  ServerNotification,
  ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { UPSTREAM_TOO_LARGE, upstreamTooLargeIn } from "../http/errors.ts";
import type { AllowList } from "./access.ts";

/**
 * The MCP server the gateway shows a caller for one HTTP request (stateless: built per request, so any
 * instance, a Lambda's included, can serve any request). Every handler forwards to the upstream through an SDK
 * `Client` and applies the server's allow-list: hidden tools, prompts and resources are left out of listings
 * and refused by name without reaching the upstream. Listings always come from the upstream (then filtered):
 * when it is unreachable the caller gets an error rather than a synced list whose items could not be used.
 */

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ProxyHooks {
  /** The connected upstream client (connected on first use). */
  upstream(): Promise<Client>;
  /** What a failed upstream call reports (upstream-client.ts upstreamFailureOf: an answer too large). */
  explain(error: unknown): unknown;
  allowed: AllowList;
  timeoutMs: number;
  /** Before a tool call is forwarded (rate limits); throws to refuse it. */
  admitToolCall(name: string): Promise<void>;
  /** What the request did, for its log. */
  note(details: {
    name?: string;
    arguments?: unknown;
    resultBytes?: number;
    toolError?: boolean;
    error?: { message: string; code: string | null };
  }): void;
}

export interface UpstreamIdentity {
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  instructions?: string;
}

/** Everything a proxy may forward, for requests that are not `initialize` (handlers need declared capabilities). */
const ALL_CAPABILITIES: ServerCapabilities = {
  tools: {},
  prompts: {},
  resources: { subscribe: true },
  completions: {},
  logging: {},
};

/** What the gateway announces for an upstream: its kinds, without list-change pushes (no session to push on). */
export function proxiedCapabilities(upstream: ServerCapabilities | undefined): ServerCapabilities {
  const out: ServerCapabilities = {};
  if (!upstream) return ALL_CAPABILITIES;
  if (upstream.tools) out.tools = {};
  if (upstream.prompts) out.prompts = {};
  if (upstream.resources) out.resources = upstream.resources.subscribe ? { subscribe: true } : {};
  if (upstream.completions) out.completions = {};
  if (upstream.logging) out.logging = {};
  return out;
}

export async function buildProxyServer(hooks: ProxyHooks, identity?: UpstreamIdentity): Promise<Server> {
  const [{ Server }, types, { UriTemplate }] = await Promise.all([
    import("@modelcontextprotocol/sdk/server/index.js"),
    import("@modelcontextprotocol/sdk/types.js"),
    import("@modelcontextprotocol/sdk/shared/uriTemplate.js"),
  ]);
  const { McpError, ErrorCode } = types;
  const capabilities = proxiedCapabilities(identity?.capabilities);
  const server = new Server(
    {
      name: identity?.serverInfo.name ?? "ai-gateway-mcp",
      version: identity?.serverInfo.version ?? "1.0.0",
      ...(identity?.serverInfo.title ? { title: identity.serverInfo.title } : {}),
    },
    { capabilities, ...(identity?.instructions ? { instructions: identity.instructions } : {}) },
  );
  const { allowed } = hooks;
  /** A handler whose failure is noted for the request's log (the SDK then answers it as a JSON-RPC error). */
  const noted =
    <A extends unknown[], R>(handler: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await handler(...args);
      } catch (thrown) {
        const error = hooks.explain(thrown);
        const tooLarge = upstreamTooLargeIn(error);
        if (tooLarge) {
          // The caller's wire format: a JSON-RPC error whose data names the code (endpoint.ts answers a lone
          // request's with HTTP 502).
          hooks.note({ error: { message: tooLarge.message, code: UPSTREAM_TOO_LARGE } });
          throw new McpError(ErrorCode.InternalError, tooLarge.message, { code: UPSTREAM_TOO_LARGE });
        }
        const code = (error as { code?: unknown }).code;
        hooks.note({
          error: { message: (error as Error).message, code: `jsonrpc_${code ?? ErrorCode.InternalError}` },
        });
        throw error;
      }
    };
  const templates = allowed.templates.map((template) => new UriTemplate(template));
  const resourceAllowed = (uri: string) =>
    allowed.resources.has(uri) || templates.some((template) => template.match(uri) !== null);
  const hidden = (kind: string, name: string) =>
    new McpError(ErrorCode.InvalidParams, `${kind} '${name}' is not available on this MCP server.`);

  /** Request options for the upstream: the caller's cancellation, the timeout, progress passed back. */
  const options = (extra: Extra, withProgress = false) => {
    const token = extra._meta?.progressToken;
    return {
      signal: extra.signal,
      timeout: hooks.timeoutMs,
      ...(withProgress && token !== undefined
        ? {
            onprogress: (progress: { progress: number; total?: number; message?: string }) =>
              void extra
                .sendNotification({ method: "notifications/progress", params: { progressToken: token, ...progress } })
                .catch(() => {}),
            resetTimeoutOnProgress: true,
          }
        : {}),
    };
  };
  /** The upstream, with its log messages during this request passed on to the caller. */
  const upstreamFor = async (extra: Extra) => {
    const client = await hooks.upstream();
    client.setNotificationHandler(types.LoggingMessageNotificationSchema, (notification) =>
      extra.sendNotification(notification).catch(() => {}),
    );
    return client;
  };
  /** Params without the caller's `_meta.progressToken` (the client sets its own towards the upstream). */
  const forwardParams = <T extends { _meta?: Record<string, unknown> }>(params: T): T => {
    if (!params._meta) return params;
    const { progressToken: _token, ...meta } = params._meta;
    return { ...params, _meta: meta };
  };

  if (capabilities.tools) {
    server.setRequestHandler(
      types.ListToolsRequestSchema,
      noted(async (request, extra) => {
        const page = await (await upstreamFor(extra)).listTools(forwardParams(request.params ?? {}), options(extra));
        return { ...page, tools: page.tools.filter((tool) => allowed.tools.has(tool.name)) };
      }),
    );
    server.setRequestHandler(
      types.CallToolRequestSchema,
      noted(async (request, extra) => {
        const { name } = request.params;
        hooks.note({ name, arguments: request.params.arguments ?? {} });
        if (!allowed.tools.has(name)) throw hidden("Tool", name);
        await hooks.admitToolCall(name);
        const client = await upstreamFor(extra);
        const result = await client.request(
          { method: "tools/call", params: forwardParams(request.params) },
          types.CallToolResultSchema,
          options(extra, true),
        );
        hooks.note({ resultBytes: JSON.stringify(result).length, toolError: result.isError === true });
        return result;
      }),
    );
  }
  if (capabilities.prompts) {
    server.setRequestHandler(
      types.ListPromptsRequestSchema,
      noted(async (request, extra) => {
        const page = await (await upstreamFor(extra)).listPrompts(forwardParams(request.params ?? {}), options(extra));
        return { ...page, prompts: page.prompts.filter((prompt) => allowed.prompts.has(prompt.name)) };
      }),
    );
    server.setRequestHandler(
      types.GetPromptRequestSchema,
      noted(async (request, extra) => {
        const { name } = request.params;
        hooks.note({ name, arguments: request.params.arguments ?? {} });
        if (!allowed.prompts.has(name)) throw hidden("Prompt", name);
        const result = await (await upstreamFor(extra)).getPrompt(forwardParams(request.params), options(extra));
        hooks.note({ resultBytes: JSON.stringify(result).length });
        return result;
      }),
    );
  }
  if (capabilities.resources) {
    server.setRequestHandler(
      types.ListResourcesRequestSchema,
      noted(async (request, extra) => {
        const page = await (await upstreamFor(extra)).listResources(
          forwardParams(request.params ?? {}),
          options(extra),
        );
        return { ...page, resources: page.resources.filter((resource) => allowed.resources.has(resource.uri)) };
      }),
    );
    server.setRequestHandler(
      types.ListResourceTemplatesRequestSchema,
      noted(async (request, extra) => {
        const page = await (await upstreamFor(extra)).listResourceTemplates(
          forwardParams(request.params ?? {}),
          options(extra),
        );
        const open = new Set(allowed.templates);
        return { ...page, resourceTemplates: page.resourceTemplates.filter((t) => open.has(t.uriTemplate)) };
      }),
    );
    server.setRequestHandler(
      types.ReadResourceRequestSchema,
      noted(async (request, extra) => {
        const { uri } = request.params;
        hooks.note({ name: uri });
        if (!resourceAllowed(uri)) throw hidden("Resource", uri);
        const result = await (await upstreamFor(extra)).readResource(forwardParams(request.params), options(extra));
        hooks.note({ resultBytes: JSON.stringify(result).length });
        return result;
      }),
    );
    if (capabilities.resources.subscribe) {
      server.setRequestHandler(
        types.SubscribeRequestSchema,
        noted(async (request, extra) => {
          hooks.note({ name: request.params.uri });
          if (!resourceAllowed(request.params.uri)) throw hidden("Resource", request.params.uri);
          return (await upstreamFor(extra)).subscribeResource(forwardParams(request.params), options(extra));
        }),
      );
      server.setRequestHandler(
        types.UnsubscribeRequestSchema,
        noted(async (request, extra) => {
          hooks.note({ name: request.params.uri });
          if (!resourceAllowed(request.params.uri)) throw hidden("Resource", request.params.uri);
          return (await upstreamFor(extra)).unsubscribeResource(forwardParams(request.params), options(extra));
        }),
      );
    }
  }
  if (capabilities.completions) {
    server.setRequestHandler(
      types.CompleteRequestSchema,
      noted(async (request, extra) => {
        const ref = request.params.ref;
        const name = ref.type === "ref/prompt" ? ref.name : ref.uri;
        hooks.note({ name });
        const open =
          ref.type === "ref/prompt"
            ? allowed.prompts.has(ref.name)
            : resourceAllowed(ref.uri) || allowed.templates.includes(ref.uri);
        if (!open) throw hidden(ref.type === "ref/prompt" ? "Prompt" : "Resource template", name);
        return (await upstreamFor(extra)).complete(forwardParams(request.params), options(extra));
      }),
    );
  }
  if (capabilities.logging) {
    server.setRequestHandler(
      types.SetLevelRequestSchema,
      noted(async (request, extra) => (await upstreamFor(extra)).setLoggingLevel(request.params.level, options(extra))),
    );
  }
  return server;
}
