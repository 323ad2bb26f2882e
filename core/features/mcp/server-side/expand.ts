import type { Principal } from "../../../auth/principal.ts";
import { HttpError, badRequest } from "../../../http/errors.ts";
import type { McpContextListing, McpToolDescriptor, McpToolHost } from "../tool-host.ts";
import { contextToolsOf } from "./context-tools.ts";
import type { FunctionTool } from "./function-tool.ts";
import { httpErrorOfHost } from "./host-errors.ts";
import type { McpToolReference } from "./references.ts";
import { McpToolNames } from "./tool-names.ts";

export interface ExpandedTools {
  /** The request's tools with each reference replaced, in place, by the function tools it stands for. */
  tools: unknown[];
  names: McpToolNames;
}

/** At most this many tools reach the model (spec 8: 128 tools on chat completions). */
const MAX_TOOLS = 128;

/**
 * Replaces each server-side MCP reference by the tools it names, as the caller may use them (the host lists only
 * enabled tools the caller is allowed): an unknown or denied server answers the host's 404/403 naming the
 * entry, a named tool the server does not offer this caller 404, all before any model call.
 */
export async function expandTools(
  tools: unknown[],
  references: McpToolReference[],
  host: McpToolHost,
  principal: Principal,
  options: { context?: boolean } = {},
): Promise<ExpandedTools> {
  const byIndex = new Map(references.map((reference) => [reference.index, reference]));
  const clientNames = tools
    .filter((_, index) => !byIndex.has(index))
    .map((tool) => {
      const entry = tool as { function?: { name?: unknown }; name?: unknown };
      return entry.function?.name ?? entry.name;
    })
    .filter((name): name is string => typeof name === "string");
  const names = new McpToolNames(clientNames);
  // One listing per server, in parallel (a server named twice is listed once).
  const servers = [...new Set(references.map((reference) => reference.server))];
  const listings = new Map<string, McpToolDescriptor[]>();
  // With the context beta, each whole server named also offers its prompts and resources (context-tools.ts).
  const contexts = new Map<string, McpContextListing>();
  const wholeServers = new Set(references.filter((reference) => !reference.tools).map((reference) => reference.server));
  await Promise.all(
    servers.map(async (server) => {
      const first = references.find((reference) => reference.server === server)!;
      try {
        listings.set(server, await host.listTools(principal, server));
        if (options.context && host.listContext && wholeServers.has(server))
          contexts.set(server, await host.listContext(principal, server));
      } catch (error) {
        throw httpErrorOfHost(error, `tools[${first.index}]`);
      }
    }),
  );
  const expanded: unknown[] = [];
  tools.forEach((tool, index) => {
    const reference = byIndex.get(index);
    if (!reference) {
      expanded.push(tool);
      return;
    }
    const listed = listings.get(reference.server)!;
    const chosen = reference.tools
      ? reference.tools.map((name) => {
          const found = listed.find((descriptor) => descriptor.name === name);
          if (!found) {
            throw new HttpError(
              404,
              `tools[${index}]: the MCP server '${reference.server}' has no tool '${name}' available to you.`,
              { code: "mcp_tool_not_found", param: `tools[${index}]` },
            );
          }
          return found;
        })
      : listed;
    for (const descriptor of chosen) {
      const name = names.nameFor(reference.server, descriptor.name);
      // The same tool named twice (a whole server and one of its tools) is offered once.
      if (expanded.some((entry) => (entry as FunctionTool).function?.name === name)) continue;
      expanded.push(functionToolOf(name, descriptor));
    }
    const context = reference.tools ? undefined : contexts.get(reference.server);
    for (const tool of context ? contextToolsOf(reference.server, context, names) : []) {
      if (!expanded.some((entry) => (entry as FunctionTool).function?.name === tool.function.name)) expanded.push(tool);
    }
  });
  if (expanded.length > MAX_TOOLS) {
    throw badRequest(
      `The server-side MCP tools expand to ${expanded.length} tools; at most ${MAX_TOOLS} tools can be sent to a model. Name single tools ('@gateway-mcp/<server>/<tool>') instead.`,
      "tools",
      "too_many_tools",
    );
  }
  return { tools: expanded, names };
}

/** An MCP tool as a chat function tool: its input schema is the function's parameters. */
export function functionToolOf(name: string, descriptor: McpToolDescriptor): FunctionTool {
  const description = descriptor.description ?? descriptor.title;
  return {
    type: "function",
    function: {
      name,
      ...(description ? { description } : {}),
      parameters: descriptor.inputSchema ?? { type: "object", properties: {} },
    },
  };
}
