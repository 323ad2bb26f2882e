import { createHash } from "node:crypto";

/**
 * The names the model sees for server-side MCP tools. Providers take function names of at most 64 characters
 * of `[a-zA-Z0-9_-]` (OpenAI's rule; Anthropic and Gemini are as strict or stricter), so a tool `add` on server
 * `calc` becomes `calc__add`; other characters become `_`, and a name that is too long or already taken (by a
 * client tool or another MCP tool) is cut and given a short hash of the full pair, so every name stays unique
 * and maps back to exactly one server and tool.
 */

export const MAX_TOOL_NAME = 64;
const INVALID = /[^a-zA-Z0-9_-]/g;

export interface McpToolTarget {
  server: string;
  tool: string;
  /** A tool of the server, or one of its context tools (resources, prompts: context-tools.ts). */
  kind: "tool" | "resource" | "prompt";
}

export class McpToolNames {
  readonly #taken: Set<string>;
  readonly #targets = new Map<string, McpToolTarget>();

  /** `reserved`: the client's own tool names, which keep theirs. */
  constructor(reserved: Iterable<string>) {
    this.#taken = new Set(reserved);
  }

  /** The model-facing name of a server's tool (the same one when asked again). */
  nameFor(server: string, tool: string, kind: McpToolTarget["kind"] = "tool"): string {
    for (const [name, target] of this.#targets)
      if (target.server === server && target.tool === tool && target.kind === kind) return name;
    let name = `${server}__${tool}`.replace(INVALID, "_");
    if (name.length > MAX_TOOL_NAME || this.#taken.has(name)) {
      const pair = kind === "tool" ? `${server}\0${tool}` : `${server}\0${tool}\0${kind}`;
      const hash = createHash("sha256").update(pair).digest("hex").slice(0, 8);
      name = `${name.slice(0, MAX_TOOL_NAME - hash.length - 1)}_${hash}`;
      for (let n = 2; this.#taken.has(name); n++) name = `${name.slice(0, MAX_TOOL_NAME - 3)}_${n}`;
    }
    this.#taken.add(name);
    this.#targets.set(name, { server, tool, kind });
    return name;
  }

  /** The server and tool a model-facing name stands for; undefined for a client tool (or an unknown name). */
  targetOf(name: string): McpToolTarget | undefined {
    return this.#targets.get(name);
  }

  get size(): number {
    return this.#targets.size;
  }
}
