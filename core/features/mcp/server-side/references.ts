import { badRequest } from "../../../http/errors.ts";

/**
 * Where a request names server-side MCP tools (spec 9). Accepted in a `tools` array:
 * - a function tool named `@gateway-mcp/<server>` (every tool the caller may use on that server) or
 *   `@gateway-mcp/<server>/<tool>` (one tool): `{type: "function", function: {name: "@gateway-mcp/github"}}` in
 *   chat, `{type: "function", name: "@gateway-mcp/github"}` in Responses;
 * - an MCP tool whose `server_url` is such a reference (OpenAI's Responses `mcp` tool shape):
 *   `{type: "mcp", server_label?, server_url: "@gateway-mcp/github", allowed_tools?: ["search", ...]}`.
 * `@portkey-mcp/` is accepted as an alias of `@gateway-mcp/` (Portkey's clients use that prefix).
 * `<server>` is the MCP server's id or slug in the caller's workspace.
 */

export const REFERENCE_PREFIXES = ["@gateway-mcp/", "@portkey-mcp/"] as const;

export interface McpToolReference {
  /** Index of the entry in the request's `tools`. */
  index: number;
  server: string;
  /** The tools asked for by name; undefined: all the server allows the caller. */
  tools?: string[];
}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._~-]*$/;

/** The reference a string makes, or undefined when it is no server-side MCP reference at all. */
function referenceText(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const prefix = REFERENCE_PREFIXES.find((candidate) => value.startsWith(candidate));
  return prefix ? value.slice(prefix.length) : undefined;
}

/** The string a tools entry names a server-side MCP reference with, if it does (cheap: no validation). */
function referenceOf(entry: unknown): string | undefined {
  if (!entry || typeof entry !== "object") return undefined;
  const tool = entry as { type?: unknown; function?: { name?: unknown }; name?: unknown; server_url?: unknown };
  // Chat nests the name (`function.name`); Responses function tools carry it flat (`name`).
  if (tool.type === "function") return referenceText(tool.function?.name ?? tool.name);
  if (tool.type === "mcp") return referenceText(tool.server_url);
  return undefined;
}

/** True when a request body's `tools` names at least one server-side MCP tool (the chat handler's cheap test). */
export function mentionsServerSideMcp(body: unknown): boolean {
  const tools = (body as { tools?: unknown } | null)?.tools;
  return Array.isArray(tools) && tools.some((entry) => referenceOf(entry) !== undefined);
}

/** The server-side MCP references of a `tools` array, checked (400 naming `tools[i]` when malformed). */
export function findReferences(tools: unknown[]): McpToolReference[] {
  const found: McpToolReference[] = [];
  tools.forEach((entry, index) => {
    const text = referenceOf(entry);
    if (text === undefined) return;
    const param = `tools[${index}]`;
    const parts = text.split("/");
    const [server, tool] = parts;
    if (parts.length > 2 || !server || !SEGMENT.test(server) || (tool !== undefined && !SEGMENT.test(tool))) {
      throw badRequest(
        `${param}: a server-side MCP tool is named '@gateway-mcp/<server>' or '@gateway-mcp/<server>/<tool>'.`,
        param,
        "invalid_mcp_tool_reference",
      );
    }
    let tools: string[] | undefined = tool === undefined ? undefined : [tool];
    const allowed = (entry as { type?: unknown; allowed_tools?: unknown }).allowed_tools;
    if ((entry as { type?: unknown }).type === "mcp" && allowed !== undefined && allowed !== null) {
      const names = allowedToolNames(allowed);
      if (!names) {
        throw badRequest(`${param}.allowed_tools must be an array of tool names.`, `${param}.allowed_tools`);
      }
      tools = tools ? tools.filter((name) => names.includes(name)) : names;
    }
    found.push({ index, server, tools });
  });
  return found;
}

/** `allowed_tools` as OpenAI's mcp tool takes it: names, or `{tool_names: [...]}`. */
function allowedToolNames(value: unknown): string[] | undefined {
  const list = Array.isArray(value) ? value : (value as { tool_names?: unknown })?.tool_names;
  if (!Array.isArray(list) || !list.every((name) => typeof name === "string")) return undefined;
  return list as string[];
}
