import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiCaller, type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Agent history across providers (docs/routing.md): items only their maker can take back (Anthropic's thinking
 * signatures, OpenAI's encrypted reasoning and item references, TTL'd cache breakpoints) are dropped when a
 * request or a fallback leg goes to another provider, and the answer's `x-gateway-dropped-history` says what;
 * on the native path they arrive untouched. A Responses chain goes back to the integration that made it while
 * that one is available.
 */

let gateway: TestGateway;
let anthropic: AnthropicMock;
let openai: OpenAIMock;
const api = apiCaller(() => gateway);

const SIGNATURE = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds+/=";
const THINKING = "The user wants the weather in Paris: call get_weather.\n\n";

const anthropicTarget = () => ({ provider: "anthropic", api_key: "sk-ant", custom_host: anthropic.url });
const openaiTarget = () => ({ provider: "openai", api_key: "sk-oai", custom_host: `${openai.url}/v1` });
const fallback = (...targets: object[]) => ({ strategy: { mode: "fallback" }, targets });

/** A Claude Code-like turn: thinking with its signature, then a tool call, then the tool's result. */
const agentTurns: Anthropic.MessageParam[] = [
  { role: "user", content: "What's the weather in Paris?" },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: THINKING, signature: SIGNATURE },
      { type: "tool_use", id: "toolu_01", name: "get_weather", input: { city: "Paris" } },
    ],
  },
  { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_01", content: "18°C, clear" }] },
];
const weatherTool: Anthropic.Tool = {
  name: "get_weather",
  description: "Weather by city",
  input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

function messagesClient(config: unknown): Anthropic {
  return new Anthropic({
    apiKey: "unused",
    baseURL: gateway.url,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config) },
    maxRetries: 0,
  });
}

function openaiClient(headers: Record<string, string>): OpenAI {
  return new OpenAI({
    apiKey: "unused",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
    maxRetries: 0,
  });
}

beforeAll(async () => {
  anthropic = await startAnthropicMock({ scenario: "text" });
  openai = await startOpenAIMock({ toolCalls: false });
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await anthropic?.close();
  await openai?.close();
});

describe("Messages with thinking history, in a tool-calling conversation", () => {
  const request = {
    model: "claude-3-5-haiku-20241022",
    max_tokens: 256,
    system: [
      { type: "text" as const, text: "Be brief.", cache_control: { type: "ephemeral" as const, ttl: "1h" as const } },
    ],
    tools: [weatherTool],
    messages: agentTurns,
  };

  it("the native path sends the thinking blocks and signatures untouched, and drops nothing", async () => {
    anthropic.setScenario("text");
    const { response } = await messagesClient(anthropicTarget()).messages.create(request).withResponse();
    expect(response.headers.get("x-gateway-dropped-history")).toBeNull();
    const sent = anthropic.requests.at(-1)!;
    expect(sent.json().messages).toEqual(agentTurns);
    expect(sent.json().system).toEqual(request.system);
    // Byte for byte: the signature and the thinking text (trailing blank line included) as the client wrote them.
    expect(sent.body.toString("utf8")).toContain(
      JSON.stringify({ type: "thinking", thinking: THINKING, signature: SIGNATURE }),
    );
  });

  it("a fallback to an OpenAI-compatible target succeeds without them, and the answer says what was dropped", async () => {
    anthropic.setScenario("overloaded");
    try {
      const before = openai.requests.length;
      const { data: message, response } = await messagesClient(fallback(anthropicTarget(), openaiTarget()))
        .messages.create({ ...request, model: "gpt-4o-mini" })
        .withResponse();
      expect(message.content[0]).toMatchObject({ type: "text" });
      expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
      expect(response.headers.get("x-gateway-dropped-history")).toBe("cache_control_ttl=1,thinking_signature=1");
      expect(openai.requests.length).toBe(before + 1);
      const sent = openai.requests.at(-1)!;
      const text = sent.body.toString("utf8");
      expect(text).not.toContain(SIGNATURE);
      expect(text).not.toContain("cache_control");
      // The tool-calling turn itself went through: the call and its result.
      expect(sent.json().messages).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ role: "assistant", tool_calls: [expect.objectContaining({ id: "toolu_01" })] }),
          expect.objectContaining({ role: "tool", tool_call_id: "toolu_01", content: "18°C, clear" }),
        ]),
      );
    } finally {
      anthropic.setScenario("text");
    }
  });
});

describe("chat history with Claude's thinking blocks (content_blocks)", () => {
  const messages = [
    { role: "user", content: "What's the weather in Paris?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "toolu_01", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
      ],
      content_blocks: [
        { type: "thinking", thinking: THINKING, signature: SIGNATURE },
        { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
      ],
    },
    { role: "tool", tool_call_id: "toolu_01", content: "18°C, clear" },
  ] as unknown as OpenAI.Chat.ChatCompletionMessageParam[];
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } },
  ];

  it("go back to Claude with their signatures, and are dropped (and reported) for another provider", async () => {
    const native = await openaiClient({ "x-gateway-config": JSON.stringify(anthropicTarget()) })
      .chat.completions.create({ model: "claude-3-5-haiku-20241022", messages, tools })
      .withResponse();
    expect(native.response.headers.get("x-gateway-dropped-history")).toBeNull();
    const toAnthropic = anthropic.requests.at(-1)!.json();
    expect(toAnthropic.messages[1].content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: THINKING, signature: SIGNATURE },
      { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
    ]);

    anthropic.setScenario("overloaded");
    try {
      const crossed = await openaiClient({
        "x-gateway-config": JSON.stringify(fallback(anthropicTarget(), openaiTarget())),
      })
        .chat.completions.create({ model: "gpt-4o-mini", messages, tools })
        .withResponse();
      expect(crossed.response.headers.get("x-gateway-dropped-history")).toBe(
        "redacted_thinking=1,thinking_signature=1",
      );
      const toOpenai = openai.requests.at(-1)!;
      expect(toOpenai.body.toString("utf8")).not.toContain("content_blocks");
      expect(toOpenai.json().messages[1].tool_calls[0].id).toBe("toolu_01");
    } finally {
      anthropic.setScenario("text");
    }
  });
});

describe("Responses history", () => {
  it("a translated target gets no encrypted reasoning nor item references; the native one gets them as sent", async () => {
    const input = [
      { type: "message", role: "user", content: "Hi" },
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAopaque" },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello." }] },
      { type: "item_reference", id: "msg_stored_elsewhere" },
      { type: "message", role: "user", content: "And now?" },
    ] as unknown as OpenAI.Responses.ResponseInput;
    const translated = await openaiClient({ "x-gateway-config": JSON.stringify(anthropicTarget()) })
      .responses.create({ model: "claude-3-5-haiku-20241022", input, store: false })
      .withResponse();
    expect(translated.response.headers.get("x-gateway-dropped-history")).toBe("encrypted_reasoning=1,item_reference=1");
    expect(anthropic.requests.at(-1)!.body.toString("utf8")).not.toContain("gAAAAopaque");

    const nativeOnly = input.filter((item: any) => item.type !== "item_reference");
    const native = await openaiClient({
      "x-gateway-config": JSON.stringify({ ...openaiTarget(), api_key: "sk-oai" }),
    })
      .responses.create({ model: "gpt-4o-mini", input: nativeOnly, store: false })
      .withResponse()
      .catch((error: unknown) => error as { status?: number });
    // The mock refuses encrypted content it did not seal for this key: what OpenAI does. It reached it as sent.
    expect((native as { status?: number }).status).toBe(400);
    expect(openai.requests.at(-1)!.json().input[1]).toEqual(nativeOnly[1]);
  });

  it("a chain keeps to the integration that made it while it is available, then falls back without its sealed items", async () => {
    const integration = async (slug: string, key: string) =>
      api("POST", "/v1/integrations", {
        name: slug,
        slug,
        ai_provider_id: "openai",
        key,
        configurations: { custom_host: `${openai.url}/v1` },
      });
    expect((await integration("oa-east", "sk-east")).status).toBe(201);
    expect((await integration("oa-west", "sk-west")).status).toBe(201);
    const down = new Set<string>();
    openai.options.guard = (request) =>
      down.has(String(request.headers.authorization))
        ? { status: 503, body: { error: { message: "unavailable", type: "server_error", code: "unavailable" } } }
        : undefined;
    const client = openaiClient({
      "x-gateway-config": JSON.stringify(fallback({ provider: "@oa-east" }, { provider: "@oa-west" })),
    });
    const ask = (previous?: string) =>
      client.responses
        .create({
          model: "gpt-4o-mini",
          input: "Go on.",
          include: ["reasoning.encrypted_content"],
          ...(previous ? { previous_response_id: previous } : {}),
        })
        .withResponse();
    const lastKey = () => String(openai.requests.at(-1)!.headers.authorization);
    try {
      // East is down: west answers and the chain starts there.
      down.add("Bearer sk-east");
      const first = await ask();
      expect(lastKey()).toBe("Bearer sk-west");
      down.clear();
      // East is back and first in the config, but the chain goes back to west, which gets its sealed reasoning.
      await expect
        .poll(async () => (await client.responses.retrieve(first.data.id).catch(() => undefined))?.id)
        .toBe(first.data.id);
      const second = await ask(first.data.id);
      expect(lastKey()).toBe("Bearer sk-west");
      expect(second.response.headers.get("x-gateway-dropped-history")).toBeNull();
      expect(
        openai.requests
          .at(-1)!
          .json()
          .input.some((item: any) => item.type === "reasoning"),
      ).toBe(true);
      // West is down: east continues the chain from the stored conversation, without west's sealed reasoning.
      down.add("Bearer sk-west");
      await expect
        .poll(async () => (await client.responses.retrieve(second.data.id).catch(() => undefined))?.id)
        .toBe(second.data.id);
      const third = await ask(second.data.id);
      expect(lastKey()).toBe("Bearer sk-east");
      expect(third.response.headers.get("x-gateway-dropped-history")).toBe("encrypted_reasoning=2");
      expect(third.data.status).toBe("completed");
    } finally {
      openai.options.guard = undefined;
    }
  });
});
