import type { Implementation, Server, ServerCapabilities, ServerContext } from "@modelcontextprotocol/server";
import { type Forwarding, type ForwardingHooks, forwarding } from "./forwarding.ts";
import { TASKS_EXTENSION, type TaskHooks, registerTaskHandlers } from "../tasks/handlers.ts";

/**
 * The MCP server the gateway shows a caller for one HTTP request (stateless: built per request, so any
 * instance, a Lambda's included, can serve any request), on either protocol era: the SDK's createMcpHandler
 * serves a 2025-11-25 request (initialize, sessions-less) and a 2026-07-28 one (per-request `_meta`,
 * `server/discover`) from the same handlers. Every handler forwards to the upstream through an SDK `Client`
 * that speaks whichever era the upstream speaks (upstream/client.ts), and applies the server's allow-list with
 * one rule for listing and calling (`AllowList`): what a listing shows is exactly what a call may use, and a
 * hidden tool, prompt or resource is refused by name without reaching the upstream. Listings come from the
 * upstream through the SDK's ttlMs-honouring cache, then filtered; results the upstream asks the client to
 * complete (`input_required`) are relayed as they are, and the caller's answers relayed back on its retry.
 */

export interface ProxyHooks extends TaskHooks, ForwardingHooks {
  /** Before a tool call is forwarded (rate limits); throws to refuse it. */
  admitToolCall(name: string): Promise<void>;
}

export interface UpstreamIdentity {
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  instructions?: string;
}

/** Everything a proxy may forward, for requests that are not `initialize` / `server/discover`. */
const ALL_CAPABILITIES: ServerCapabilities = {
  tools: {},
  prompts: {},
  resources: { subscribe: true },
  completions: {},
  logging: {},
};

/**
 * What the gateway announces for an upstream: its kinds, without list-change pushes (nothing to push on), plus
 * the Tasks extension when the upstream has tools (the gateway runs long tool calls as tasks itself).
 */
export function proxiedCapabilities(upstream: ServerCapabilities | undefined): ServerCapabilities {
  const out: ServerCapabilities = {};
  const source = upstream ?? ALL_CAPABILITIES;
  if (source.tools) out.tools = {};
  if (source.prompts) out.prompts = {};
  if (source.resources) out.resources = source.resources.subscribe ? { subscribe: true } : {};
  if (source.completions) out.completions = {};
  if (source.logging) out.logging = {};
  if (out.tools) out.extensions = { [TASKS_EXTENSION]: {} };
  return out;
}

export async function buildProxyServer(hooks: ProxyHooks, identity?: UpstreamIdentity): Promise<Server> {
  const [{ Server }, relay] = await Promise.all([import("@modelcontextprotocol/server"), forwarding(hooks)]);
  const capabilities = proxiedCapabilities(identity?.capabilities);
  const server = new Server(
    {
      name: identity?.serverInfo.name ?? "ai-gateway-mcp",
      version: identity?.serverInfo.version ?? "1.0.0",
      ...(identity?.serverInfo.title ? { title: identity.serverInfo.title } : {}),
    },
    { capabilities, ...(identity?.instructions ? { instructions: identity.instructions } : {}) },
  );
  if (capabilities.tools) registerTools(server, hooks, relay);
  if (capabilities.prompts) registerPrompts(server, hooks, relay);
  if (capabilities.resources) registerResources(server, hooks, relay, capabilities.resources.subscribe === true);
  if (capabilities.completions) registerCompletions(server, hooks, relay);
  if (capabilities.logging)
    server.setRequestHandler(
      "logging/setLevel",
      relay.noted(async (request, ctx) => (await relay.legacyOnly(ctx, "logging/setLevel", request.params)) as never),
    );
  return server;
}

function registerTools(server: Server, hooks: ProxyHooks, relay: Forwarding): void {
  const { allowed } = hooks;
  server.setRequestHandler(
    "tools/list",
    relay.noted(async (request, ctx) => {
      const page = await relay.list(ctx, "tools/list", request.params);
      const tools = (page.tools as Array<{ name: string }>).filter((tool) => allowed.tools.has(tool.name));
      return { ...page, tools } as never;
    }),
  );
  server.setRequestHandler(
    "tools/call",
    relay.noted(async (request, ctx) => {
      const { name } = request.params;
      hooks.note({ name, arguments: request.params.arguments ?? {} });
      if (!allowed.tools.has(name)) throw relay.hidden("Tool", name);
      await hooks.admitToolCall(name);
      const call = (signal: AbortSignal) => relay.call(ctx, "tools/call", request.params, { progress: true, signal });
      const result = await hooks.runAsTask(ctx, name, call);
      if (result.resultType !== "task")
        hooks.note({ resultBytes: JSON.stringify(result).length, toolError: result.isError === true });
      return result as never;
    }),
  );
  registerTaskHandlers(server, hooks);
}

function registerPrompts(server: Server, hooks: ProxyHooks, relay: Forwarding): void {
  const { allowed } = hooks;
  server.setRequestHandler(
    "prompts/list",
    relay.noted(async (request, ctx) => {
      const page = await relay.list(ctx, "prompts/list", request.params);
      const prompts = (page.prompts as Array<{ name: string }>).filter((prompt) => allowed.prompts.has(prompt.name));
      return { ...page, prompts } as never;
    }),
  );
  server.setRequestHandler(
    "prompts/get",
    relay.noted(async (request, ctx) => {
      const { name } = request.params;
      hooks.note({ name, arguments: request.params.arguments ?? {} });
      if (!allowed.prompts.has(name)) throw relay.hidden("Prompt", name);
      const result = await relay.call(ctx, "prompts/get", request.params);
      hooks.note({ resultBytes: JSON.stringify(result).length });
      return result as never;
    }),
  );
}

function registerResources(server: Server, hooks: ProxyHooks, relay: Forwarding, subscribe: boolean): void {
  const { allowed } = hooks;
  server.setRequestHandler(
    "resources/list",
    relay.noted(async (request, ctx) => {
      const page = await relay.list(ctx, "resources/list", request.params);
      const resources = (page.resources as Array<{ uri: string }>).filter((entry) => allowed.resources.has(entry.uri));
      return { ...page, resources } as never;
    }),
  );
  server.setRequestHandler(
    "resources/templates/list",
    relay.noted(async (request, ctx) => {
      const page = await relay.list(ctx, "resources/templates/list", request.params);
      const open = new Set(allowed.templates);
      const resourceTemplates = (page.resourceTemplates as Array<{ uriTemplate: string }>).filter((entry) =>
        open.has(entry.uriTemplate),
      );
      return { ...page, resourceTemplates } as never;
    }),
  );
  server.setRequestHandler(
    "resources/read",
    relay.noted(async (request, ctx) => {
      const { uri } = request.params;
      hooks.note({ name: uri });
      if (!relay.resourceAllowed(uri)) throw relay.hidden("Resource", uri);
      const result = await relay.call(ctx, "resources/read", request.params);
      hooks.note({ resultBytes: JSON.stringify(result).length });
      return result as never;
    }),
  );
  if (!subscribe) return;
  for (const method of ["resources/subscribe", "resources/unsubscribe"] as const) {
    server.setRequestHandler(
      method,
      relay.noted(async (request, ctx) => {
        hooks.note({ name: request.params.uri });
        if (!relay.resourceAllowed(request.params.uri)) throw relay.hidden("Resource", request.params.uri);
        return (await relay.legacyOnly(ctx, method, request.params)) as never;
      }),
    );
  }
}

function registerCompletions(server: Server, hooks: ProxyHooks, relay: Forwarding): void {
  const { allowed } = hooks;
  server.setRequestHandler(
    "completion/complete",
    relay.noted(async (request, ctx: ServerContext) => {
      const ref = request.params.ref;
      const name = ref.type === "ref/prompt" ? ref.name : ref.uri;
      hooks.note({ name });
      const open =
        ref.type === "ref/prompt"
          ? allowed.prompts.has(ref.name)
          : relay.resourceAllowed(ref.uri) || allowed.templates.includes(ref.uri);
      if (!open) throw relay.hidden(ref.type === "ref/prompt" ? "Prompt" : "Resource template", name);
      return (await relay.call(ctx, "completion/complete", request.params)) as never;
    }),
  );
}
