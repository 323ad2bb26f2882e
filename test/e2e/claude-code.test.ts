import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type BedrockMock, startBedrockMock } from "../mocks/bedrock.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { createTestServiceAccount, type VertexMock, startVertexMock } from "../mocks/vertex.ts";

/**
 * Claude Code through the gateway (issue 40), configured by the recipe of docs/responses-and-messages.md as
 * written (run by bash), sending what Claude Code sends: the beta Messages API (`?beta=true`, its
 * `anthropic-beta` list), streamed turns with its tools and `thinking`, system prompt and tools marked
 * `cache_control` with `ttl: "1h"`, `metadata.user_id`, count_tokens, and the thinking blocks of a turn sent
 * back with their signatures. On Anthropic, Bedrock and Vertex AI (native) and an OpenAI-compatible provider
 * (translated).
 */

const DOC = readFileSync(new URL("../../docs/responses-and-messages.md", import.meta.url), "utf8");
const BETAS = [
  "claude-code-20250219",
  "interleaved-thinking-2025-05-14",
  "fine-grained-tool-streaming-2025-05-14",
  "extended-cache-ttl-2025-04-11",
];
const AWS = { accessKeyId: "AKIDCLAUDECODE", secretAccessKey: "claude-code-secret" };

let gateway: TestGateway;
let anthropic: AnthropicMock;
let bedrock: BedrockMock;
let vertex: VertexMock;
let openai: OpenAIMock;
let vertexAccount: string;

beforeAll(async () => {
  [gateway, anthropic, bedrock, vertex, openai] = await Promise.all([
    startTestGateway(),
    startAnthropicMock({ delayMs: 1 }),
    startBedrockMock({ credentials: AWS }),
    startVertexMock(),
    startOpenAIMock({ reply: "Done.", toolArguments: { command: "ls" } }),
  ]);
  vertexAccount = (await createTestServiceAccount(vertex.tokenUri)).json;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropic, bedrock, vertex, openai].map((mock: MockServer | undefined) => mock?.close()));
});

/** The `sh` blocks of the doc's Claude Code section, in order. */
function recipes(): string[] {
  const section = DOC.slice(DOC.indexOf("## Claude Code"));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** The environment a recipe leaves for `claude`, as bash computes it (the `claude` line itself not run). */
function recipeEnv(recipe: string, vars: Record<string, string>): Record<string, string> {
  const script = `${recipe.replace(/^claude$/m, "").replaceAll("http://localhost:8787", gateway.url)}
node -e 'process.stdout.write(JSON.stringify(process.env))'`;
  const out = execFileSync("bash", ["-c", script], { env: { PATH: process.env.PATH!, ...vars }, encoding: "utf8" });
  return JSON.parse(out);
}

/** The first recipe for a cloud's Claude: its provider named instead of Anthropic, its credentials in headers. */
function cloudRecipeEnv(provider: string): Record<string, string> {
  const env = recipeEnv(recipes()[0]!, { ANTHROPIC_PROVIDER_KEY: "unused", GATEWAY_KEY: gateway.adminKey });
  const headers = env.ANTHROPIC_CUSTOM_HEADERS!.replace(
    "x-gateway-provider: anthropic",
    `x-gateway-provider: ${provider}`,
  );
  return { ...env, ANTHROPIC_CUSTOM_HEADERS: headers };
}

/**
 * An Anthropic client set up from that environment as Claude Code sets up its own: the base URL, the key as
 * `x-api-key`, each `Name: value` line of ANTHROPIC_CUSTOM_HEADERS as a header, and its own headers.
 */
function claudeCode(env: Record<string, string>, extraHeaders: Record<string, string> = {}): Anthropic {
  const custom = Object.fromEntries(
    env
      .ANTHROPIC_CUSTOM_HEADERS!.split("\n")
      .map((line) => line.split(/:\s*(.*)/s))
      .filter(([name]) => name?.trim())
      .map(([name, value]) => [name!.trim(), (value ?? "").trim()]),
  );
  return new Anthropic({
    baseURL: env.ANTHROPIC_BASE_URL,
    apiKey: env.ANTHROPIC_API_KEY,
    defaultHeaders: { "x-app": "cli", ...custom, ...extraHeaders },
    maxRetries: 0,
  });
}

const tools: Anthropic.Beta.BetaTool[] = [
  {
    name: "Bash",
    description: "Executes a bash command",
    input_schema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  },
  {
    name: "Read",
    description: "Reads a file",
    input_schema: { type: "object", properties: { file_path: { type: "string" } }, required: ["file_path"] },
    cache_control: { type: "ephemeral", ttl: "1h" },
  },
];

/** One turn as Claude Code sends it: streamed, through the beta API, with its system prompt, tools and thinking. */
async function turn(client: Anthropic, model: string, messages: Anthropic.Beta.BetaMessageParam[]) {
  const stream = client.beta.messages.stream(
    {
      model,
      max_tokens: 32000,
      temperature: 1,
      system: [
        { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
        { type: "text", text: "Working directory: /repo", cache_control: { type: "ephemeral", ttl: "1h" } },
      ],
      messages,
      tools,
      thinking: { type: "enabled", budget_tokens: 4000 },
      metadata: { user_id: "user_0123_account__session_4567" },
      betas: BETAS,
    },
    { query: { beta: "true" } },
  );
  return stream.finalMessage();
}

/** The conversation Claude Code holds: ask, run the tool it asked for, read the answer, then go on. */
async function conversation(client: Anthropic, model: string) {
  const ask: Anthropic.Beta.BetaMessageParam = {
    role: "user",
    content: [{ type: "text", text: "List the files", cache_control: { type: "ephemeral", ttl: "1h" } }],
  };
  const first = await turn(client, model, [ask]);
  const use = first.content.find((block) => block.type === "tool_use") as Anthropic.Beta.BetaToolUseBlock;
  expect(use, model).toBeDefined();
  expect(first.stop_reason, model).toBe("tool_use");
  const result: Anthropic.Beta.BetaMessageParam = {
    role: "user",
    content: [{ type: "tool_result", tool_use_id: use.id, content: "README.md\npackage.json" }],
  };
  const second = await turn(client, model, [ask, { role: "assistant", content: first.content }, result]);
  const follow: Anthropic.Beta.BetaMessageParam = { role: "user", content: "Thanks" };
  const history = [ask, { role: "assistant" as const, content: first.content }, result];
  await turn(client, model, [...history, { role: "assistant", content: second.content }, follow]);
  const count = await client.beta.messages.countTokens({ model, messages: [...history, follow], tools, betas: BETAS });
  expect(count.input_tokens, model).toBeGreaterThan(0);
  return { first, second };
}

/** The thinking blocks of an answer, as the client received them. */
const thinkingOf = (message: Anthropic.Beta.BetaMessage) =>
  message.content.filter((block) => block.type === "thinking" || block.type === "redacted_thinking");

describe("Claude Code through the gateway, configured as the docs say", () => {
  it("the recipe leaves the key as x-api-key and the gateway's headers apart", () => {
    const env = recipeEnv(recipes()[0]!, { ANTHROPIC_PROVIDER_KEY: "sk-ant-provider", GATEWAY_KEY: "gk-example" });
    expect(env.ANTHROPIC_BASE_URL).toBe(gateway.url);
    expect(env.ANTHROPIC_API_KEY).toBe("sk-ant-provider");
    expect(env.ANTHROPIC_CUSTOM_HEADERS).toBe("x-gateway-api-key: gk-example\nx-gateway-provider: anthropic");
  });

  it("on Anthropic: tools, thinking with signatures byte for byte, anthropic-beta, cache_control ttl, count_tokens", async () => {
    const env = recipeEnv(recipes()[0]!, { ANTHROPIC_PROVIDER_KEY: "sk-ant-provider", GATEWAY_KEY: gateway.adminKey });
    anthropic.requests.length = 0;
    const { second } = await conversation(
      claudeCode(env, { "x-gateway-custom-host": anthropic.url }),
      "claude-sonnet-4-6",
    );
    const sent = anthropic.requests.filter((request) => request.path.startsWith("/v1/messages"));
    expect(sent.map((request) => request.path)).toEqual([
      "/v1/messages",
      "/v1/messages",
      "/v1/messages",
      "/v1/messages/count_tokens",
    ]);
    for (const request of sent) {
      expect(request.headers["x-api-key"]).toBe("sk-ant-provider");
      // (The SDK adds its token-counting beta to count_tokens.)
      expect(String(request.headers["anthropic-beta"]).startsWith(BETAS.join(","))).toBe(true);
      expect(JSON.stringify(request.headers)).not.toContain(gateway.adminKey);
    }
    const firstBody = sent[0]!.json();
    expect(firstBody.system[1].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(firstBody.tools[1].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    expect(firstBody.metadata).toEqual({ user_id: "user_0123_account__session_4567" });
    // The thinking block (and its signature) the gateway streamed is the one the client sent back, unchanged.
    const streamed = thinkingOf(second);
    expect(streamed[0]).toMatchObject({
      type: "thinking",
      signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    });
    const returned = sent[2]!.json().messages[3].content;
    expect(JSON.stringify(returned.filter((block: any) => block.type === "thinking"))).toBe(JSON.stringify(streamed));
  });

  it("on Bedrock: InvokeModel with the body's anthropic_beta, the thinking signature back as it came", async () => {
    const env = cloudRecipeEnv("bedrock");
    bedrock.requests.length = 0;
    const client = claudeCode(env, {
      "x-gateway-custom-host": bedrock.url,
      "x-gateway-aws-access-key-id": AWS.accessKeyId,
      "x-gateway-aws-secret-access-key": AWS.secretAccessKey,
      "x-gateway-aws-region": "us-east-1",
    });
    const model = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
    const { second } = await conversation(client, model);
    expect(bedrock.requests.map((request) => request.path.replace(/^\/model\/[^/]+/, ""))).toEqual([
      "/invoke-with-response-stream",
      "/invoke-with-response-stream",
      "/invoke-with-response-stream",
    ]);
    const body = bedrock.requests[0]!.json();
    expect(body.anthropic_beta).toEqual(BETAS);
    expect(body).not.toHaveProperty("model");
    expect(body.tools[1].cache_control).toEqual({ type: "ephemeral", ttl: "1h" });
    const streamed = thinkingOf(second);
    expect(streamed.length).toBeGreaterThan(0);
    const returned = bedrock.requests[2]!.json().messages[3].content.filter((block: any) => block.type === "thinking");
    expect(JSON.stringify(returned)).toBe(JSON.stringify(streamed));
  });

  it("on Vertex AI: streamRawPredict, the thinking signature back as it came", async () => {
    const env = cloudRecipeEnv("vertex-ai");
    vertex.requests.length = 0;
    const client = claudeCode(env, {
      "x-gateway-custom-host": vertex.url,
      "x-gateway-vertex-region": "us-east5",
      "x-gateway-vertex-service-account-json": vertexAccount,
    });
    const { second } = await conversation(client, "claude-sonnet-4-5@20250929");
    const calls = vertex.requests.filter((request) => request.path.includes("/publishers/anthropic/"));
    expect(calls).toHaveLength(3);
    expect(calls[0]!.path).toMatch(/\/models\/claude-sonnet-4-5@20250929:streamRawPredict$/);
    expect(calls[0]!.headers["anthropic-beta"]).toBe(BETAS.join(","));
    const streamed = thinkingOf(second);
    const returned = calls[2]!.json().messages[3].content.filter((block: any) => block.type === "thinking");
    expect(JSON.stringify(returned)).toBe(JSON.stringify(streamed));
  });

  it("on an OpenAI-compatible provider (the second recipe): translated, cache_control ttl and thinking dropped, no 400", async () => {
    const env = recipeEnv(recipes()[1]!, { OPENAI_API_KEY: "sk-openai-provider", GATEWAY_KEY: gateway.adminKey });
    expect(env.ANTHROPIC_MODEL).toBe("gpt-4.1");
    openai.reset();
    await conversation(claudeCode(env, { "x-gateway-custom-host": `${openai.url}/v1` }), env.ANTHROPIC_MODEL!);
    expect(openai.requests).toHaveLength(3);
    for (const request of openai.requests) {
      expect(request.headers.authorization).toBe("Bearer sk-openai-provider");
      const body = request.json();
      expect(JSON.stringify(body)).not.toContain("cache_control");
      expect(JSON.stringify(body)).not.toContain("signature");
      expect(body.stream).toBe(true);
    }
    const second = openai.requests[1]!.json();
    expect(second.messages.find((message: any) => message.role === "tool")?.content).toBe("README.md\npackage.json");
  });
});
