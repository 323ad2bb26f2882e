import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServer } from "../../core/features/mcp/records.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * Server-side MCP mode with the context beta (server-side-mcp-context-2026-11-28): a whole server named in `tools`
 * also offers its enabled resources and prompts to the model, as `<server>__read_resource` and
 * `<server>__get_prompt`, served by the MCP gateway with the endpoint's rules (a hidden resource is refused and
 * the model told so). Without the beta nothing but the server's tools is offered. The model is a mock that reads
 * and renders what it is offered, then answers with what it got.
 */

const BETAS = "server-side-mcp-2026-06-01, server-side-mcp-context-2026-11-28";
let gateway: TestGateway;
let upstream: McpUpstream;
let model: MockServer;
let server: McpServer;
let key: string;
/** The tools the model was offered, per request. */
const offered: Array<Array<{ function: { name: string; description?: string } }>> = [];

/** First step: read memo://readme, a hidden note and render greet; second step: answer with the tool results. */
function answer(request: RecordedRequest, res: Parameters<Parameters<typeof startMockServer>[0]>[1]) {
  const body = request.json();
  offered.push(body.tools);
  const named = (suffix: string) =>
    body.tools.map((tool: any) => tool.function.name).find((name: string) => name.endsWith(suffix));
  const results = body.messages.filter((message: any) => message.role === "tool");
  const call = (id: string, name: string, args: unknown) => ({
    id,
    type: "function",
    function: { name, arguments: JSON.stringify(args) },
  });
  const message =
    results.length === 0
      ? {
          role: "assistant",
          content: null,
          tool_calls: [
            call("read", named("__read_resource"), { uri: "memo://readme" }),
            call("hidden", named("__read_resource"), { uri: "memo://hidden" }),
            call("prompt", named("__get_prompt"), { name: "greet", arguments: { name: "Ada" } }),
          ],
        }
      : { role: "assistant", content: results.map((result: any) => result.content).join(" | ") };
  sendJson(res, 200, {
    id: "chatcmpl-context",
    object: "chat.completion",
    created: 1,
    model: "gpt-4o-mini",
    choices: [{ index: 0, message, finish_reason: results.length === 0 ? "tool_calls" : "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
}

function client(betas: string): OpenAI {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${model.url}/v1`,
      "x-gateway-beta": betas,
    },
    maxRetries: 0,
  });
}

beforeAll(async () => {
  upstream = await startMcpUpstream();
  model = await startMockServer(answer);
  gateway = await startTestGateway();
  const workspace = await seedWorkspace(gateway, "MCP context");
  key = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "ctx",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
  ({ server } = await seedMcpServer(gateway, {
    url: upstream.url,
    workspaceId: workspace.id,
    disabled: ["secret_admin_tool"],
  }));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await model?.close();
});

describe("prompts and resources in server-side MCP mode", () => {
  it("offers, reads and renders them with the context beta, refusing what the server hides", async () => {
    const before = offered.length;
    const completion = await client(BETAS).chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "What does the readme say?" }],
      tools: [{ type: "function", function: { name: `@gateway-mcp/${server.slug}` } } as never],
    });
    const names = offered[before]!.map((tool) => tool.function.name);
    expect(names).toContain(`${server.slug}__read_resource`);
    expect(names).toContain(`${server.slug}__get_prompt`);
    const reader = offered[before]!.find((tool) => tool.function.name.endsWith("__read_resource"))!;
    expect(reader.function.description).toContain("memo://readme");
    expect(reader.function.description).toContain("memo://notes/{id}");
    const text = completion.choices[0]!.message.content!;
    expect(text).toContain("The readme.");
    expect(text).toContain("Hello Ada");
    expect(text).toMatch(/Error: the tool could not be called\. Resource 'memo:\/\/hidden' is not available/);
  });

  it("offers only the server's tools without the context beta", async () => {
    const before = offered.length;
    await client("server-side-mcp-2026-06-01")
      .chat.completions.create({
        model: "gpt-4o-mini",
        messages: [{ role: "user", content: "Hi" }],
        tools: [{ type: "function", function: { name: `@gateway-mcp/${server.slug}` } } as never],
      })
      .catch(() => undefined);
    const names = offered[before]!.map((tool) => tool.function.name);
    expect(names.some((name) => name.endsWith("__read_resource") || name.endsWith("__get_prompt"))).toBe(false);
  });
});
