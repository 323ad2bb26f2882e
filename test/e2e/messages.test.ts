import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Anthropic's Messages API in front of any provider, driven by the official `@anthropic-ai/sdk` client (what
 * Claude Code uses): natively on Anthropic (the body forwarded as it is, parsed for usage), translated to chat
 * completions for an OpenAI-compatible provider. create, stream, tool use round trips, count_tokens, logs.
 */

let gateway: TestGateway;
const mocks: MockServer[] = [];
let anthropicMock: AnthropicMock;
let openaiMock: OpenAIMock;

beforeAll(async () => {
  gateway = await startTestGateway();
  anthropicMock = await startAnthropicMock({ delayMs: 2 });
  openaiMock = await startOpenAIMock({ reply: "Hello from chat.", toolArguments: { city: "Paris" } });
  mocks.push(anthropicMock, openaiMock);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(mocks.map((mock) => mock.close()));
});

function clientFor(headers: Record<string, string>): Anthropic {
  return new Anthropic({
    apiKey: "provider-key",
    baseURL: gateway.url,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
    maxRetries: 0,
  });
}

const tools: Anthropic.Tool[] = [
  {
    name: "get_weather",
    description: "Weather for a city",
    input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];

const targets = () => [
  {
    name: "anthropic (native)",
    model: "claude-3-5-sonnet-20241022",
    client: clientFor({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropicMock.url }),
  },
  {
    name: "openai-compatible",
    model: "gpt-4o-mini",
    client: clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openaiMock.url}/v1` }),
  },
];

describe("messages on any provider", () => {
  it("messages.create, messages.stream and a tool use round trip", async () => {
    for (const { name, model, client } of targets()) {
      const message = await client.messages.create({
        model,
        max_tokens: 256,
        system: "Be brief.",
        messages: [{ role: "user", content: "Hi" }],
      });
      expect(message.type, name).toBe("message");
      expect(message.role, name).toBe("assistant");
      expect(message.content[0]?.type, name).toBe("text");
      expect(message.stop_reason, name).toBe("end_turn");
      expect(message.usage.input_tokens, name).toBeGreaterThan(0);
      expect(message.usage.output_tokens, name).toBeGreaterThan(0);

      const stream = client.messages.stream({ model, max_tokens: 256, messages: [{ role: "user", content: "Hi" }] });
      let text = "";
      stream.on("text", (delta) => {
        text += delta;
      });
      const final = await stream.finalMessage();
      expect(text.length, name).toBeGreaterThan(0);
      expect(final.content.find((block) => block.type === "text")?.text, name).toBe(text);
      expect(final.stop_reason, name).toBe("end_turn");
      expect(final.usage.output_tokens, name).toBeGreaterThan(0);

      const asked = await client.messages.create({
        model,
        max_tokens: 256,
        tools,
        messages: [{ role: "user", content: "Weather in Paris?" }],
      });
      expect(asked.stop_reason, name).toBe("tool_use");
      const use = asked.content.find((block) => block.type === "tool_use") as Anthropic.ToolUseBlock;
      expect(use.name, name).toBe("get_weather");
      const answered = await client.messages.create({
        model,
        max_tokens: 256,
        tools,
        tool_choice: { type: "none" },
        messages: [
          { role: "user", content: "Weather in Paris?" },
          { role: "assistant", content: asked.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: use.id, content: "21 degrees" }] },
        ],
      });
      expect(
        answered.content.some((block) => block.type === "text"),
        name,
      ).toBe(true);
    }
    // The translated tool result reached the chat provider as a tool message tied to its call.
    const sent = JSON.parse(openaiMock.lastRequest()!.body.toString());
    const toolMessage = sent.messages.find((message: any) => message.role === "tool");
    expect(toolMessage.content).toContain("21 degrees");
    expect(sent.messages.find((message: any) => message.tool_calls)?.tool_calls[0].id).toBe(toolMessage.tool_call_id);
  });

  it("a streamed tool use arrives as input_json_delta and assembles into its input", async () => {
    for (const { name, model, client } of targets()) {
      const stream = client.messages.stream({
        model,
        max_tokens: 256,
        tools,
        messages: [{ role: "user", content: "Weather?" }],
      });
      const final = await stream.finalMessage();
      const use = final.content.find((block) => block.type === "tool_use") as Anthropic.ToolUseBlock;
      expect(use?.name, name).toBe("get_weather");
      expect(typeof use.input, name).toBe("object");
      expect(final.stop_reason, name).toBe("tool_use");
    }
  });

  it("countTokens: Anthropic's own count natively, the gateway's tokenizer elsewhere", async () => {
    for (const { name, model, client } of targets()) {
      const count = await client.messages.countTokens({
        model,
        messages: [{ role: "user", content: "Hello there, how are you?" }],
      });
      expect(count.input_tokens, name).toBeGreaterThan(0);
    }
  });

  it("bad bodies answer 400 naming the param, in Anthropic's error shape", async () => {
    const { client, model } = targets()[1]!;
    await expect(
      client.messages.create({ model, messages: [{ role: "user", content: "Hi" }] } as any),
    ).rejects.toMatchObject({ status: 400 });
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "content-type": "application/json",
      },
      body: JSON.stringify({ model, max_tokens: 10, temperature: 3, messages: [{ role: "user", content: "Hi" }] }),
    });
    expect(response.status).toBe(400);
    // Anthropic's error shape (its clients read `error.type`), the message naming the param.
    const body = await response.json();
    expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
    expect(body.error.message).toContain("'temperature'");
  });

  it("guardrails apply to messages, native or translated: 446 before any provider is called", async () => {
    for (const { name, model, client } of targets()) {
      const provider = name.startsWith("anthropic") ? "anthropic" : "openai";
      const host = provider === "anthropic" ? anthropicMock.url : `${openaiMock.url}/v1`;
      const config = {
        provider,
        custom_host: host,
        input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
      };
      const guarded = new Anthropic({
        apiKey: "provider-key",
        baseURL: gateway.url,
        defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config) },
        maxRetries: 0,
      });
      const before = provider === "anthropic" ? anthropicMock.requests.length : openaiMock.requests.length;
      await expect(
        guarded.messages.create({ model, max_tokens: 64, messages: [{ role: "user", content: "my password" }] }),
        name,
      ).rejects.toMatchObject({ status: 446 });
      expect(provider === "anthropic" ? anthropicMock.requests.length : openaiMock.requests.length, name).toBe(before);
      void client;
    }
  });

  it("usage and cost are logged for every message call", async () => {
    const logs = async () => {
      const response = await fetch(`${gateway.url}/v1/logs?limit=100`, {
        headers: { "x-gateway-api-key": gateway.adminKey },
      });
      return ((await response.json()) as { data: any[] }).data.filter(
        (log) => log.path === "/v1/messages" && log.status === 200,
      );
    };
    await expect.poll(async () => (await logs()).length, { timeout: 5000 }).toBeGreaterThanOrEqual(10);
    const ok = await logs();
    for (const provider of ["anthropic", "openai"]) {
      const mine = ok.filter((log) => log.provider === provider);
      expect(mine.length, provider).toBeGreaterThanOrEqual(5);
      expect(
        mine.every((log) => log.usage?.totalTokens > 0),
        provider,
      ).toBe(true);
      expect(
        mine.some((log) => log.stream === true),
        provider,
      ).toBe(true);
      expect(
        mine.every((log) => log.cost > 0),
        provider,
      ).toBe(true);
    }
  });
});
