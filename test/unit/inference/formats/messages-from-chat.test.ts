import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { messageId } from "../../../../core/inference/formats/messages/from-chat.ts";
import { messagesFormat } from "../../../../core/inference/formats/messages/index.ts";
import type { TransformContext } from "../../../../core/providers/types.ts";

const ctx: TransformContext = {
  target: { provider: "openai" },
  route: "messages",
  stream: false,
  model: "gpt-4o",
  now: 1_700_000_000,
  requestId: "req-123",
  includeUsage: false,
};
const body = { model: "gpt-4o", max_tokens: 100, messages: [{ role: "user", content: "Hi" }] };
const openai = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../fixtures/openai/${name}`, import.meta.url), "utf8"));
const anthropic = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../fixtures/anthropic/${name}`, import.meta.url), "utf8"));

function completion(message: Record<string, any>, finish: string | null, usage?: Record<string, any>) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "gpt-4o-2024-08-06",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage,
  };
}

describe("chat -> messages: the answer", () => {
  it("turns the chat fixture (text + tool call) into a Message", () => {
    const message = messagesFormat.fromChat(openai("chat-completion.json"), body, ctx);
    expect(message).toEqual({
      id: messageId("req-123"),
      type: "message",
      role: "assistant",
      model: "gpt-4o-2024-08-06",
      content: [
        { type: "text", text: "Let me check." },
        {
          type: "tool_use",
          id: "call_8Jd2mWq0xP3eRzL5vKcA1bNf",
          name: "get_weather",
          input: { city: "Paris", unit: "celsius" },
        },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: { input_tokens: 82, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 24 },
    });
  });

  it("gives a stable msg_ id made of hex from the request id", () => {
    expect(messageId("req-123")).toMatch(/^msg_[0-9a-f]{24}$/);
    expect(messageId("req-123")).toBe(messageId("req-123"));
    expect(messageId("req-124")).not.toBe(messageId("req-123"));
  });

  it("puts reasoning first as a thinking block with an empty signature", () => {
    const message = messagesFormat.fromChat(
      completion({ content: "12,231", reasoning_content: "27*453..." }, "stop"),
      body,
      ctx,
    );
    expect(message.content).toEqual([
      { type: "thinking", thinking: "27*453...", signature: "" },
      { type: "text", text: "12,231" },
    ]);
  });

  it("parses tool arguments, with {} for arguments that are not JSON", () => {
    const message = messagesFormat.fromChat(
      completion(
        {
          content: null,
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "a", arguments: '{"x":1}' } },
            { id: "call_2", type: "function", function: { name: "b", arguments: "{not json" } },
          ],
        },
        // Some providers finish tool calls with `stop`: the calls still mean tool_use.
        "stop",
      ),
      body,
      ctx,
    );
    expect(message.content).toEqual([
      { type: "tool_use", id: "call_1", name: "a", input: { x: 1 } },
      { type: "tool_use", id: "call_2", name: "b", input: {} },
    ]);
    expect(message.stop_reason).toBe("tool_use");
  });

  it.each([
    ["stop", "end_turn"],
    ["length", "max_tokens"],
    ["tool_calls", "tool_use"],
    ["content_filter", "refusal"],
    [null, "end_turn"],
  ])("maps finish_reason %s to stop_reason %s", (finish, stop) => {
    const message = messagesFormat.fromChat(completion({ content: "x" }, finish), body, ctx);
    expect(message.stop_reason).toBe(stop);
    expect(message.stop_sequence).toBeNull();
  });

  it("says stop_sequence with the sequence when the provider names one the client asked for", () => {
    const withStops = { ...body, stop_sequences: ["###", "END"] };
    const answer = completion({ content: "x" }, "stop");
    (answer.choices[0] as any).stop_reason = "END";
    const message = messagesFormat.fromChat(answer, withStops, ctx);
    expect(message.stop_reason).toBe("stop_sequence");
    expect(message.stop_sequence).toBe("END");
    (answer.choices[0] as any).stop_reason = "other";
    expect(messagesFormat.fromChat(answer, withStops, ctx).stop_reason).toBe("end_turn");
  });

  it("answers a refusal as text with stop_reason refusal", () => {
    const message = messagesFormat.fromChat(completion({ content: null, refusal: "I can't help." }, "stop"), body, ctx);
    expect(message.content).toEqual([{ type: "text", text: "I can't help." }]);
    expect(message.stop_reason).toBe("refusal");
  });

  it("splits prompt tokens into input, cache reads and cache writes", () => {
    const message = messagesFormat.fromChat(
      completion({ content: "x" }, "stop", {
        prompt_tokens: 1200,
        completion_tokens: 30,
        total_tokens: 1230,
        prompt_tokens_details: { cached_tokens: 1000, cache_creation_tokens: 150 },
      }),
      body,
      ctx,
    );
    expect(message.usage).toEqual({
      input_tokens: 50,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 150,
      output_tokens: 30,
    });
    // And back: the chat usage the pipeline prices is what the provider reported.
    expect(messagesFormat.usageOf(message)).toMatchObject({ prompt_tokens: 1200, completion_tokens: 30 });
  });
});

describe("messages answers: usage and completeness", () => {
  it("reads usage in chat shape, cache reads and writes counted in the prompt", () => {
    expect(messagesFormat.usageOf(anthropic("message-cache-usage.json"))).toEqual({
      prompt_tokens: 21 + 1500 + 188086,
      completion_tokens: 393,
      total_tokens: 21 + 1500 + 188086 + 393,
      prompt_tokens_details: { cached_tokens: 1500, cache_creation_tokens: 188086 },
    });
    expect(messagesFormat.usageOf({ type: "message", content: [] })).toBeUndefined();
  });

  it("is complete only with a stop reason", () => {
    expect(messagesFormat.isComplete(anthropic("message-text.json"))).toBe(true);
    expect(messagesFormat.isComplete({ ...anthropic("message-text.json"), stop_reason: null })).toBe(false);
    expect(messagesFormat.isComplete({ ...anthropic("message-text.json"), stop_reason: "" })).toBe(false);
    expect(messagesFormat.isComplete(anthropic("error-overloaded.json"))).toBe(false);
  });
});
