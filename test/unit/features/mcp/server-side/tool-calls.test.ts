import { describe, expect, it } from "vitest";
import type { Principal } from "../../../../../core/auth/principal.ts";
import { runToolCalls, splitToolCalls } from "../../../../../core/features/mcp/server-side/run-tools.ts";
import { McpToolNames } from "../../../../../core/features/mcp/server-side/tool-names.ts";
import { toolMessageText } from "../../../../../core/features/mcp/server-side/tool-results.ts";
import { sumUsage } from "../../../../../core/features/mcp/server-side/usage.ts";
import { McpToolError } from "../../../../../core/features/mcp/tool-host.ts";
import { FakeMcpTools, calculatorServer } from "../../../../helpers/fake-mcp-tools.ts";

const principal: Principal = { kind: "api_key", organisationId: "org_1", workspaceId: "ws_1", scopes: ["*"] };
const call = (id: string, name: string, args: string) => ({
  id,
  type: "function" as const,
  function: { name, arguments: args },
});

describe("tool results as tool messages", () => {
  it("joins text, shows other content and structured content as JSON, and marks errors", () => {
    expect(
      toolMessageText({
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
    ).toBe("a\n\nb");
    expect(toolMessageText({ content: [], structuredContent: { sum: 3 } })).toBe('{"sum":3}');
    expect(toolMessageText({ content: [{ type: "image", data: "AA==", mimeType: "image/png" }] })).toBe(
      '{"type":"image","data":"AA==","mimeType":"image/png"}',
    );
    const error = toolMessageText({ content: [{ type: "text", text: "division by zero" }], isError: true });
    expect(error).toMatch(/^Error: /);
    expect(error).toContain("division by zero");
  });
});

describe("running tool calls", () => {
  it("splits server-side calls from the client's, runs them in the trace, and tells errors to the model", async () => {
    const names = new McpToolNames(["lookup"]);
    names.nameFor("calc", "add");
    names.nameFor("calc", "fail");
    const host = new FakeMcpTools({ calc: calculatorServer() });
    const { server, client } = splitToolCalls(
      [
        call("c1", "calc__add", '{"a":2,"b":3}'),
        call("c2", "lookup", "{}"),
        call("c3", "calc__fail", ""),
        call("c4", "calc__add", "{not json"),
      ],
      names,
    );
    expect(client.map((c) => c.id)).toEqual(["c2"]);
    const { messages, records } = await runToolCalls(server, host, principal, { traceId: "trace-1" });
    expect(messages[0]).toEqual({ role: "tool", tool_call_id: "c1", content: "5" });
    expect(messages[1]!.content).toMatch(/^Error: .*division by zero/);
    expect(messages[2]!.content).toMatch(/^Error: .*not valid JSON/);
    expect(records.map((r) => [r.tool, r.is_error])).toEqual([
      ["add", false],
      ["fail", true],
      ["add", true],
    ]);
    expect(host.calls).toEqual([
      { server: "calc", tool: "add", arguments: { a: 2, b: 3 }, traceId: "trace-1" },
      { server: "calc", tool: "fail", arguments: {}, traceId: "trace-1" },
    ]);
  });

  it("runs several calls in parallel", async () => {
    const names = new McpToolNames([]);
    names.nameFor("slow", "wait");
    let running = 0;
    let most = 0;
    const host = new FakeMcpTools({
      slow: [
        {
          name: "wait",
          inputSchema: { type: "object" },
          async run() {
            running += 1;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, 30));
            running -= 1;
            return { content: [{ type: "text", text: "ok" }] };
          },
        },
      ],
    });
    const { server } = splitToolCalls([call("a", "slow__wait", "{}"), call("b", "slow__wait", "{}")], names);
    await runToolCalls(server, host, principal, { traceId: "t" });
    expect(most).toBe(2);
  });

  it("tells a refused or rate-limited call to the model, and lets other faults through", async () => {
    const names = new McpToolNames([]);
    names.nameFor("calc", "add");
    const refusing = new FakeMcpTools({ calc: calculatorServer() });
    refusing.callTool = async () => {
      throw new McpToolError(429, "Rate limit reached for MCP tool calls.", "rate_limited");
    };
    const { server } = splitToolCalls([call("a", "calc__add", "{}")], names);
    const { messages } = await runToolCalls(server, refusing, principal, { traceId: "t" });
    expect(messages[0]!.content).toMatch(/^Error: .*Rate limit reached/);
    refusing.callTool = async () => {
      throw new TypeError("bug");
    };
    await expect(runToolCalls(server, refusing, principal, { traceId: "t" })).rejects.toThrow("bug");
  });
});

describe("usage across steps", () => {
  it("adds tokens and their details", () => {
    expect(
      sumUsage([
        { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        undefined,
        {
          prompt_tokens: 20,
          completion_tokens: 7,
          total_tokens: 27,
          prompt_tokens_details: { cached_tokens: 4 },
          completion_tokens_details: { reasoning_tokens: 2 },
        },
      ]),
    ).toEqual({
      prompt_tokens: 30,
      completion_tokens: 12,
      total_tokens: 42,
      prompt_tokens_details: { cached_tokens: 4 },
      completion_tokens_details: { reasoning_tokens: 2 },
    });
    expect(sumUsage([undefined])).toBeUndefined();
  });
});
