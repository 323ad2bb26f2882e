import type { McpContextListing, McpContextRequest } from "../tool-host.ts";
import type { FunctionTool } from "./function-tool.ts";
import type { McpToolNames, McpToolTarget } from "./tool-names.ts";

/**
 * A server's resources and prompts offered to the model in server-side mode (the context beta, beta.ts): two
 * function tools per server, named like its tools (`<server>__read_resource`, `<server>__get_prompt`), whose
 * descriptions list what may be read or rendered (the enabled resources, templates and prompts, as the MCP
 * gateway lists them for the caller). A call is served by the MCP gateway with the endpoint's rules; the
 * model's arguments are checked here first (a bad one is told to the model, not thrown).
 */

export const READ_RESOURCE = "read_resource";
export const GET_PROMPT = "get_prompt";
/** Longest description a context tool gets (providers cap tool descriptions). */
const MAX_DESCRIPTION = 4000;

export function contextToolsOf(server: string, listing: McpContextListing, names: McpToolNames): FunctionTool[] {
  const tools: FunctionTool[] = [];
  if (listing.resources.length > 0 || listing.templates.length > 0) {
    const lines = [
      ...listing.resources.map((entry) => `- ${entry.uri}${describe(entry.name, entry.description)}`),
      ...listing.templates.map(
        (entry) => `- ${entry.uriTemplate} (a template)${describe(entry.name, entry.description)}`,
      ),
    ];
    tools.push({
      type: "function",
      function: {
        name: names.nameFor(server, READ_RESOURCE, "resource"),
        description: cut(`Reads a resource of the MCP server '${server}'. Resources:\n${lines.join("\n")}`),
        parameters: {
          type: "object",
          properties: { uri: { type: "string", description: "The resource's URI (a template's, filled in)." } },
          required: ["uri"],
        },
      },
    });
  }
  if (listing.prompts.length > 0) {
    const lines = listing.prompts.map((prompt) => {
      const args = (prompt.arguments ?? []).map((arg) => `${arg.name}${arg.required ? "" : "?"}`).join(", ");
      return `- ${prompt.name}(${args})${describe(undefined, prompt.description)}`;
    });
    tools.push({
      type: "function",
      function: {
        name: names.nameFor(server, GET_PROMPT, "prompt"),
        description: cut(`Renders a prompt of the MCP server '${server}'. Prompts:\n${lines.join("\n")}`),
        parameters: {
          type: "object",
          properties: {
            name: { type: "string", enum: listing.prompts.map((prompt) => prompt.name) },
            arguments: { type: "object", additionalProperties: { type: "string" } },
          },
          required: ["name"],
        },
      },
    });
  }
  return tools;
}

/** What a context tool call asks of the MCP gateway, or why its arguments do not say it (told to the model). */
export function contextRequestOf(target: McpToolTarget, args: Record<string, unknown>): McpContextRequest | string {
  if (target.kind === "resource") {
    return typeof args.uri === "string" && args.uri !== ""
      ? { kind: "resource", uri: args.uri }
      : "`uri` must be a string.";
  }
  if (typeof args.name !== "string" || args.name === "") return "`name` must be a prompt's name.";
  const given = args.arguments ?? {};
  if (typeof given !== "object" || given === null || Array.isArray(given))
    return "`arguments` must be an object of strings.";
  const entries = Object.entries(given as Record<string, unknown>);
  if (entries.some(([, value]) => typeof value !== "string")) return "`arguments` must be an object of strings.";
  return { kind: "prompt", name: args.name, arguments: Object.fromEntries(entries) as Record<string, string> };
}

const describe = (name?: string, description?: string) =>
  [name, description].filter(Boolean).length > 0 ? `: ${[name, description].filter(Boolean).join(" — ")}` : "";

const cut = (text: string) => (text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text);
