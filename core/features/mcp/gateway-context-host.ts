import type { Services } from "../../services.ts";
import { resolveMcpTarget, resourceMatcher } from "./endpoint/access.ts";
import { type McpRequestRecord, writeMcpLog } from "./endpoint/request-log.ts";
import { noteHostFailure, withUpstream } from "./upstream/kept-clients.ts";
import {
  type McpContextListing,
  type McpContextRequest,
  McpToolError,
  type McpToolHost,
  type McpToolResult,
} from "./tool-host.ts";

/** At most this many of each kind are offered to a model (its tool descriptions have limits of their own). */
const MAX_ENTRIES = 200;

/**
 * The prompts and resources of the MCP gateway for server-side mode (the context tools of
 * core/features/mcp/server-side/context-tools.ts): listed and used with the endpoint's own rules (the server's
 * allow-list, one resource rule for listing and reading), through the same kept upstream clients as tool calls.
 * Reading and rendering are logged like tool calls, and like them on the endpoint are not counted by policies.
 */
export function mcpContextHost(services: Services): Required<Pick<McpToolHost, "listContext" | "useContext">> {
  return {
    async listContext(principal, serverRef) {
      const target = await resolveMcpTarget(services, principal, serverRef);
      const timeout = services.settings.MCP_UPSTREAM_TIMEOUT_MS;
      return withUpstream(services, principal, target, undefined, async (client) => {
        const capabilities = client.getServerCapabilities() ?? {};
        const listing: McpContextListing = { resources: [], templates: [], prompts: [] };
        if (capabilities.resources) {
          const open = new Set(target.allowed.templates);
          const [resources, templates] = await Promise.all([
            client.listResources(undefined, { timeout }),
            client.listResourceTemplates(undefined, { timeout }),
          ]);
          listing.resources = resources.resources
            .filter((resource) => target.allowed.resources.has(resource.uri))
            .slice(0, MAX_ENTRIES)
            .map(({ uri, name, description }) => ({ uri, name, ...(description ? { description } : {}) }));
          listing.templates = templates.resourceTemplates
            .filter((template) => open.has(template.uriTemplate))
            .slice(0, MAX_ENTRIES)
            .map(({ uriTemplate, name, description }) => ({
              uriTemplate,
              name,
              ...(description ? { description } : {}),
            }));
        }
        if (capabilities.prompts) {
          const prompts = await client.listPrompts(undefined, { timeout });
          listing.prompts = prompts.prompts
            .filter((prompt) => target.allowed.prompts.has(prompt.name))
            .slice(0, MAX_ENTRIES)
            .map(({ name, description, arguments: args }) => ({
              name,
              ...(description ? { description } : {}),
              ...(args ? { arguments: args } : {}),
            }));
        }
        return listing;
      });
    },

    async useContext(principal, serverRef, request, context) {
      const startedAt = performance.now();
      const target = await resolveMcpTarget(services, principal, serverRef);
      const name = request.kind === "resource" ? request.uri : request.name;
      const record: McpRequestRecord = {
        method: request.kind === "resource" ? "resources/read" : "prompts/get",
        name,
        ...(request.kind === "prompt" ? { arguments: request.arguments } : {}),
        status: 200,
      };
      try {
        await refuseHidden(target, request);
        const result = await withUpstream(services, principal, target, context.signal, async (client) => {
          const options = { signal: context.signal, timeout: services.settings.MCP_UPSTREAM_TIMEOUT_MS };
          return request.kind === "resource"
            ? resourceAsToolResult(await client.readResource({ uri: request.uri }, options))
            : promptAsToolResult(await client.getPrompt({ name: request.name, arguments: request.arguments }, options));
        });
        record.resultBytes = JSON.stringify(result).length;
        return result;
      } catch (error) {
        throw noteHostFailure(record, error);
      } finally {
        await writeMcpLog(services, principal, target.server, record, {
          traceId: context.traceId,
          startedAt,
          httpMethod: "POST",
          path: `/mcp/${target.server.slug}`,
          route: "/mcp/:server",
        });
      }
    },
  };
}

async function refuseHidden(
  target: Awaited<ReturnType<typeof resolveMcpTarget>>,
  request: McpContextRequest,
): Promise<void> {
  const open =
    request.kind === "resource"
      ? (await resourceMatcher(target.allowed))(request.uri)
      : target.allowed.prompts.has(request.name);
  if (open) return;
  const what = request.kind === "resource" ? `Resource '${request.uri}'` : `Prompt '${request.name}'`;
  throw new McpToolError(
    404,
    `${what} is not available on MCP server '${target.server.slug}'.`,
    "mcp_context_not_found",
  );
}

/** A resource's contents as a tool result: each content an embedded resource (text shown, blobs as JSON). */
function resourceAsToolResult(result: { contents: Array<Record<string, unknown>> }): McpToolResult {
  return { content: result.contents.map((resource) => ({ type: "resource", resource })) };
}

/** A rendered prompt as a tool result: each message's text, with its role. */
function promptAsToolResult(result: {
  description?: string;
  messages: Array<{ role: string; content: Record<string, unknown> }>;
}): McpToolResult {
  return {
    content: result.messages.map((message) => ({
      type: "text",
      text:
        message.content.type === "text"
          ? `${message.role}: ${String(message.content.text)}`
          : `${message.role}: ${JSON.stringify(message.content)}`,
    })),
  };
}
