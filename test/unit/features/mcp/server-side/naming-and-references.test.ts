import { describe, expect, it } from "vitest";
import { optedIntoServerSideMcp } from "../../../../../core/features/mcp/server-side/beta.ts";
import { expandTools } from "../../../../../core/features/mcp/server-side/expand.ts";
import { findReferences, mentionsServerSideMcp } from "../../../../../core/features/mcp/server-side/references.ts";
import { MAX_TOOL_NAME, McpToolNames } from "../../../../../core/features/mcp/server-side/tool-names.ts";
import { parseGatewayHeaders } from "../../../../../core/http/gateway-headers.ts";
import type { Principal } from "../../../../../core/auth/principal.ts";
import { FakeMcpTools, calculatorServer } from "../../../../helpers/fake-mcp-tools.ts";

const principal: Principal = { kind: "api_key", organisationId: "org_1", workspaceId: "ws_1", scopes: ["*"] };
const fn = (name: string) => ({ type: "function", function: { name } });

describe("the beta header", () => {
  const opted = (headers: Record<string, string>) => optedIntoServerSideMcp(parseGatewayHeaders(new Headers(headers)));

  it("is read from x-gateway-beta or its x-portkey-beta alias, among other betas, in any case", () => {
    expect(opted({ "x-gateway-beta": "server-side-mcp-2026-06-01" })).toBe(true);
    expect(opted({ "x-portkey-beta": "use-responses-api-2026-07-30, Server-Side-MCP-2026-06-01" })).toBe(true);
    expect(opted({ "x-gateway-beta": "use-responses-api-2026-07-30" })).toBe(false);
    expect(opted({ "x-gateway-beta": "server-side-mcp-2026-06-02" })).toBe(false);
    expect(opted({})).toBe(false);
  });
});

describe("references in tools", () => {
  it("finds function tools and mcp tools with a @gateway-mcp (or @portkey-mcp) name", () => {
    const tools = [
      fn("get_weather"),
      fn("@gateway-mcp/calc"),
      fn("@portkey-mcp/calc/add"),
      { type: "mcp", server_label: "gh", server_url: "@gateway-mcp/github", allowed_tools: ["search"] },
      { type: "mcp", server_url: "https://example.com/mcp" },
    ];
    expect(mentionsServerSideMcp({ tools })).toBe(true);
    expect(mentionsServerSideMcp({ tools: [fn("get_weather")] })).toBe(false);
    expect(mentionsServerSideMcp({ tools: "nope" })).toBe(false);
    expect(findReferences(tools)).toEqual([
      { index: 1, server: "calc", tools: undefined },
      { index: 2, server: "calc", tools: ["add"] },
      { index: 3, server: "github", tools: ["search"] },
    ]);
  });

  it("answers 400 naming the entry for a malformed reference", () => {
    for (const name of ["@gateway-mcp/", "@gateway-mcp/a/b/c", "@gateway-mcp/bad server"]) {
      expect(() => findReferences([fn("x"), fn(name)])).toThrow(
        expect.objectContaining({ status: 400, param: "tools[1]" }),
      );
    }
  });
});

describe("model-facing tool names", () => {
  it("are <server>__<tool>, valid for providers, and map back", () => {
    const names = new McpToolNames(["get_weather"]);
    expect(names.nameFor("calc", "add")).toBe("calc__add");
    expect(names.nameFor("my.server", "do it")).toBe("my_server__do_it");
    expect(names.targetOf("calc__add")).toEqual({ server: "calc", tool: "add", kind: "tool" });
    expect(names.targetOf("get_weather")).toBeUndefined();
    expect(names.nameFor("calc", "add")).toBe("calc__add");
  });

  it("stay within 64 characters and unique, also against client tools", () => {
    const names = new McpToolNames(["calc__add"]);
    const taken = names.nameFor("calc", "add");
    expect(taken).not.toBe("calc__add");
    expect(taken).toMatch(/^calc__add_[0-9a-f]{8}$/);
    const long1 = names.nameFor("s".repeat(40), `${"t".repeat(40)}1`);
    const long2 = names.nameFor("s".repeat(40), `${"t".repeat(40)}2`);
    for (const name of [long1, long2]) {
      expect(name.length).toBeLessThanOrEqual(MAX_TOOL_NAME);
      expect(name).toMatch(/^[a-zA-Z0-9_-]+$/);
    }
    expect(long1).not.toBe(long2);
    expect(names.targetOf(long2)).toEqual({ server: "s".repeat(40), tool: `${"t".repeat(40)}2`, kind: "tool" });
  });
});

describe("expansion", () => {
  const host = () => new FakeMcpTools({ calc: calculatorServer() }, ["secret"]);

  it("replaces a server by every tool it allows, and a server/tool by one, in place", async () => {
    const tools = [fn("get_weather"), fn("@gateway-mcp/calc"), fn("@gateway-mcp/calc/add")];
    const expanded = await expandTools(tools, findReferences(tools), host(), principal);
    expect(expanded.tools).toEqual([
      fn("get_weather"),
      {
        type: "function",
        function: {
          name: "calc__add",
          description: "Adds two numbers",
          parameters: calculatorServer()[0]!.inputSchema,
        },
      },
      { type: "function", function: { name: "calc__fail", parameters: { type: "object", properties: {} } } },
    ]);
  });

  it("answers the host's 404 or 403 for an unknown or denied server, and 404 for a tool it does not offer", async () => {
    for (const [name, status] of [
      ["@gateway-mcp/nope", 404],
      ["@gateway-mcp/secret", 403],
      ["@gateway-mcp/calc/multiply", 404],
    ] as const) {
      const tools = [fn("x"), fn(name)];
      await expect(expandTools(tools, findReferences(tools), host(), principal)).rejects.toMatchObject({
        status,
        param: "tools[1]",
      });
    }
  });

  it("keeps only the allowed_tools of an mcp tool", async () => {
    const tools = [{ type: "mcp", server_url: "@gateway-mcp/calc", allowed_tools: ["fail"] }];
    const expanded = await expandTools(tools, findReferences(tools), host(), principal);
    expect(expanded.tools.map((tool: any) => tool.function.name)).toEqual(["calc__fail"]);
  });
});
