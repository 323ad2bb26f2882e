import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { messageId } from "../../../../core/inference/formats/messages/from-chat.ts";
import { messagesFormat } from "../../../../core/inference/formats/messages/index.ts";
import type { TypedEvent } from "../../../../core/providers/types.ts";
import type { TransformContext } from "../../../../core/providers/types.ts";
import { readAnthropicJson, readAnthropicSse } from "../../../mocks/anthropic.ts";

const ctx: TransformContext = {
  target: { provider: "openai" },
  route: "messages",
  stream: true,
  model: "gpt-4o-mini",
  now: 1_700_000_000,
  requestId: "req-stream",
  includeUsage: true,
};
const body = { model: "gpt-4o-mini", max_tokens: 100, stream: true, messages: [{ role: "user", content: "Hi" }] };
const ID = messageId("req-stream");

/** The chunks of an OpenAI SSE fixture (without `[DONE]`). */
function chatChunks(name: string): Record<string, any>[] {
  const text = readFileSync(new URL(`../../../fixtures/openai/${name}`, import.meta.url), "utf8");
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line !== "data: [DONE]")
    .map((line) => JSON.parse(line.slice(6)));
}

function convert(chunks: Record<string, any>[], requestBody: Record<string, any> = body): TypedEvent[] {
  const converter = messagesFormat.streamFromChat(requestBody, ctx);
  return [...chunks.flatMap((chunk) => converter.push(chunk)), ...converter.end()];
}

function assemble(events: TypedEvent[]): Record<string, any> {
  const assembler = messagesFormat.assembler();
  for (const event of events) assembler.add(event);
  return assembler.result();
}

const chunk = (delta: Record<string, any>, finish: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  model: "gpt-4o-mini-2024-07-18",
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const usageChunk = (usage: Record<string, any>) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  model: "gpt-4o-mini-2024-07-18",
  choices: [],
  usage,
});

describe("chat stream -> messages events", () => {
  it("spells a text answer in Anthropic's order, usage in message_delta", () => {
    const events = convert(chatChunks("chat-stream.sse"));
    expect(events).toEqual([
      {
        type: "message_start",
        message: {
          id: ID,
          type: "message",
          role: "assistant",
          model: "gpt-4o-mini-2024-07-18",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
        },
      },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Bonjour" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: " !" } },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { input_tokens: 11, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 3 },
      },
      { type: "message_stop" },
    ]);
    const message = assemble(events);
    expect(message.content).toEqual([{ type: "text", text: "Bonjour !" }]);
    expect(messagesFormat.isComplete(message)).toBe(true);
  });

  it("opens one tool_use block per call and streams its arguments as input_json_delta", () => {
    const chunks = [
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Checking both." }),
      chunk({
        tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "get_weather", arguments: "" } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({
        tool_calls: [
          {
            index: 1,
            id: "call_b",
            type: "function",
            function: { name: "get_weather", arguments: '{"city":"Tokyo"}' },
          },
        ],
      }),
      chunk({}, "tool_calls"),
      usageChunk({
        prompt_tokens: 90,
        completion_tokens: 40,
        total_tokens: 130,
        prompt_tokens_details: { cached_tokens: 64 },
      }),
    ];
    const events = convert(chunks);
    expect(events.slice(1)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Checking both." } },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "call_a", name: "get_weather", input: {} },
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '{"city":' } },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: '"Paris"}' } },
      { type: "content_block_stop", index: 1 },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "call_b", name: "get_weather", input: {} },
      },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"city":"Tokyo"}' } },
      { type: "content_block_stop", index: 2 },
      {
        type: "message_delta",
        delta: { stop_reason: "tool_use", stop_sequence: null },
        usage: { input_tokens: 26, cache_creation_input_tokens: 0, cache_read_input_tokens: 64, output_tokens: 40 },
      },
      { type: "message_stop" },
    ]);

    // The stream and the JSON answer of the same completion spell the same Message.
    const json = messagesFormat.fromChat(
      {
        model: "gpt-4o-mini-2024-07-18",
        choices: [
          {
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: "Checking both.",
              tool_calls: [
                { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
                { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } },
              ],
            },
          },
        ],
        usage: {
          prompt_tokens: 90,
          completion_tokens: 40,
          total_tokens: 130,
          prompt_tokens_details: { cached_tokens: 64 },
        },
      },
      body,
      ctx,
    );
    expect(assemble(events)).toEqual(json);
  });

  it("streams reasoning as a thinking block before the text", () => {
    const events = convert([
      chunk({ role: "assistant", reasoning_content: "27 * 453" }),
      chunk({ reasoning_content: " = 12231" }),
      chunk({ content: "12,231" }),
      chunk({}, "stop"),
      usageChunk({ prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 }),
    ]);
    expect(events.slice(1, 7)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "27 * 453" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: " = 12231" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "12,231" } },
    ]);
    expect(assemble(events).content).toEqual([
      { type: "thinking", thinking: "27 * 453 = 12231", signature: "" },
      { type: "text", text: "12,231" },
    ]);
  });

  it("maps length and a named stop sequence at the end", () => {
    const length = convert([chunk({ content: "abc" }), chunk({}, "length")]);
    expect(length.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "max_tokens" } });
    const finish = { ...chunk({}, "stop") };
    (finish.choices[0] as any).stop_reason = "END";
    const stopped = convert([chunk({ content: "abc" }), finish], { ...body, stop_sequences: ["END"] });
    expect(stopped.at(-2)).toMatchObject({ delta: { stop_reason: "stop_sequence", stop_sequence: "END" } });
  });

  it("streams a refusal as text and stops with refusal", () => {
    const events = convert([chunk({ refusal: "I can't help with that." }), chunk({}, "stop")]);
    expect(events[2]).toEqual({
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "I can't help with that." },
    });
    expect(events.at(-2)).toMatchObject({ delta: { stop_reason: "refusal" } });
  });

  it("closes open blocks and ends with an error event when the stream is cut", () => {
    const converter = messagesFormat.streamFromChat(body, ctx);
    converter.push(chunk({ role: "assistant", content: "Partial" }));
    const end = converter.end();
    expect(end).toEqual([
      { type: "content_block_stop", index: 0 },
      { type: "error", error: { type: "api_error", message: expect.any(String) } },
    ]);
    expect(converter.end()).toEqual([]);
    expect(converter.push(chunk({ content: "late" }))).toEqual([]);
    const assembled = assemble([...convert([chunk({ content: "Partial" })])]);
    expect(messagesFormat.isComplete(assembled)).toBe(false);
  });

  it("sends nothing after message_stop", () => {
    const converter = messagesFormat.streamFromChat(body, ctx);
    const events = [
      ...converter.push(chunk({ content: "Hi" }, "stop")),
      ...converter.push(usageChunk({ prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 })),
    ];
    expect(events.at(-1)).toEqual({ type: "message_stop" });
    expect(converter.push(usageChunk({ prompt_tokens: 9, completion_tokens: 9, total_tokens: 18 }))).toEqual([]);
    expect(converter.end()).toEqual([]);
  });

  it("finishes at end() when the provider sends no usage chunk", () => {
    const events = convert([chunk({ content: "Hi" }), chunk({}, "stop")]);
    expect(events.slice(-2)).toEqual([
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { input_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
      },
      { type: "message_stop" },
    ]);
  });
});

describe("replay and the assembler", () => {
  it.each(["message-text.json", "message-tool-use.json", "message-thinking.json", "message-cache-usage.json"])(
    "replays %s as events that assemble back into it",
    (name) => {
      const message = readAnthropicJson(name);
      const events = messagesFormat.replay(message);
      expect(events[0]!.type).toBe("message_start");
      expect(events.at(-1)).toEqual({ type: "message_stop" });
      expect(assemble(events)).toEqual(message);
    },
  );

  it("replays blocks as Anthropic streams them", () => {
    const events = messagesFormat.replay(readAnthropicJson("message-thinking.json"));
    expect(events.slice(1, 6)).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "" } },
      {
        type: "content_block_delta",
        index: 0,
        delta: {
          type: "thinking_delta",
          thinking: "The user asks for 27 * 453. 27 * 453 = 27 * 400 + 27 * 53 = 10800 + 1431 = 12231.",
        },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "signature_delta", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds" },
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: {
          type: "redacted_thinking",
          data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP",
        },
      },
    ]);
    const tool = messagesFormat.replay(readAnthropicJson("message-tool-use.json"));
    expect(tool).toContainEqual({
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"location":"Paris, France","unit":"celsius"}' },
    });
  });

  it("folds a native Anthropic stream (tool use with partial JSON) into its Message", () => {
    const assembler = messagesFormat.assembler();
    for (const event of readAnthropicSse("stream-tool-use.sse")) assembler.add(JSON.parse(event.data));
    const message = assembler.result();
    expect(message).toMatchObject({
      id: "msg_01StreamTool0002",
      model: "claude-sonnet-4-5-20250929",
      stop_reason: "tool_use",
      content: [
        { type: "text", text: "Let me check both cities." },
        { type: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather", input: { location: "Paris" } },
        { type: "tool_use", id: "toolu_01Bq9VnE7tK2mQ3hZs8Yd4Rc", name: "get_weather", input: { location: "Tokyo" } },
      ],
    });
    expect(assembler.model()).toBe("claude-sonnet-4-5-20250929");
    expect(assembler.usage()).toMatchObject({ prompt_tokens: 472, completion_tokens: 89 });
  });

  it("reports usage as it grows, cache reads in the prompt", () => {
    const assembler = messagesFormat.assembler();
    expect(assembler.usage()).toBeUndefined();
    const events = readAnthropicSse("stream-text.sse").map((event) => JSON.parse(event.data));
    assembler.add(events[0]);
    expect(assembler.usage()).toMatchObject({
      prompt_tokens: 125,
      completion_tokens: 1,
      prompt_tokens_details: { cached_tokens: 100 },
    });
    for (const event of events.slice(1)) assembler.add(event);
    expect(assembler.usage()).toMatchObject({ prompt_tokens: 125, completion_tokens: 15 });
    expect(assembler.result().content).toEqual([{ type: "text", text: "Hello, world!" }]);
  });

  it("shows a tool's input so far while its block is open, without losing later deltas", () => {
    const assembler = messagesFormat.assembler();
    const events = readAnthropicSse("stream-tool-use.sse").map((event) => JSON.parse(event.data));
    const stopAt = events.findIndex((event) => event.type === "content_block_stop" && event.index === 1);
    for (const event of events.slice(0, stopAt - 1)) assembler.add(event);
    expect(assembler.result().content[1].input).toEqual({});
    for (const event of events.slice(stopAt - 1)) assembler.add(event);
    expect(assembler.result().content[1].input).toEqual({ location: "Paris" });
  });
});
