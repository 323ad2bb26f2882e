import { describe, expect, it } from "vitest";
import { chatCompletionRequest, normaliseChatRequest } from "../../../../core/inference/gateway/schemas/chat.ts";
import { completionRequest } from "../../../../core/inference/gateway/schemas/completions.ts";
import { embeddingRequest } from "../../../../core/inference/gateway/schemas/embeddings.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { validate } from "../../../../core/http/json.ts";

const messages = [{ role: "user", content: "hi" }];
const chat = (extra: Record<string, unknown>) => ({ model: "m", messages, ...extra });

function paramOf(schema: Parameters<typeof validate>[0], body: unknown): string | null | undefined {
  try {
    validate(schema, body);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return (error as HttpError).param;
  }
}

function messageOf(schema: Parameters<typeof validate>[0], body: unknown): string | undefined {
  try {
    validate(schema, body);
    return undefined;
  } catch (error) {
    return (error as HttpError).message;
  }
}

describe("chat completion request (spec 4.2, 8)", () => {
  it.each([
    [{ messages: [] }, "messages"],
    [{ model: "" }, "model"],
    [{ n: 0 }, "n"],
    [{ n: 129 }, "n"],
    [{ stop: ["a", "b", "c", "d", "e"] }, "stop"],
    [{ temperature: 2.1 }, "temperature"],
    [{ temperature: -0.1 }, "temperature"],
    [{ top_p: 1.5 }, "top_p"],
    [{ frequency_penalty: -2.5 }, "frequency_penalty"],
    [{ presence_penalty: 2.5 }, "presence_penalty"],
    [{ logit_bias: { "50256": -101 } }, "logit_bias.50256"],
    [{ logprobs: true, top_logprobs: 21 }, "top_logprobs"],
    [{ top_logprobs: 2 }, "top_logprobs"],
    [{ tools: Array.from({ length: 129 }, (_, i) => ({ type: "function", function: { name: `f${i}` } })) }, "tools"],
    [{ functions: [] }, "functions"],
    [{ stream_options: { include_usage: true } }, "stream_options"],
    [{ messages: [{ role: "robot", content: "x" }] }, "messages[0].role"],
    [{ messages: [{ role: "tool", content: "x" }] }, "messages[0].tool_call_id"],
    [{ tool_choice: "sometimes" }, "tool_choice"],
    [{ seed: 1.5 }, "seed"],
  ])("rejects %j naming %s", (extra, param) => {
    expect(paramOf(chatCompletionRequest, chat(extra))).toBe(param);
  });

  it("accepts the full range, every role and unknown extra fields", () => {
    const body = chat({
      messages: [
        { role: "system", content: "s" },
        { role: "developer", content: "d" },
        { role: "user", content: [{ type: "text", text: "u" }] },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: "{}" } }],
        },
        { role: "tool", content: "r", tool_call_id: "c1" },
        { role: "function", content: "r", name: "f" },
      ],
      n: 128,
      stop: ["a", "b", "c", "d"],
      temperature: 2,
      top_p: 0,
      logprobs: true,
      top_logprobs: 20,
      logit_bias: { "1": 100 },
      stream: true,
      stream_options: { include_usage: true },
      thinking: { type: "enabled", budget_tokens: 1024 },
      vendor_extension: { keep: true },
    });
    expect(validate(chatCompletionRequest, body)).toMatchObject({ vendor_extension: { keep: true }, top_logprobs: 20 });
  });

  it("answers with zod's English messages and ours (zod/mini loads no locale: core/http/zod-mini.ts does)", () => {
    expect(messageOf(chatCompletionRequest, chat({ n: 0 }))).toBe(
      "Invalid value for 'n': Too small: expected number to be >=1",
    );
    expect(messageOf(chatCompletionRequest, chat({ seed: 1.5 }))).toBe(
      "Invalid value for 'seed': expected an integer from -9223372036854775808 to 9223372036854775807",
    );
    expect(messageOf(chatCompletionRequest, chat({ model: 3 }))).toBe(
      "Invalid value for 'model': Invalid input: expected string, received number",
    );
    expect(messageOf(chatCompletionRequest, chat({ messages: [] }))).toBe(
      "Invalid value for 'messages': messages must contain at least one message",
    );
  });

  it("maps deprecated functions/function_call to tools/tool_choice", () => {
    const body = validate(
      chatCompletionRequest,
      chat({ functions: [{ name: "f", parameters: {} }], function_call: { name: "f" } }),
    );
    expect(normaliseChatRequest(body)).toMatchObject({
      tools: [{ type: "function", function: { name: "f" } }],
      tool_choice: { type: "function", function: { name: "f" } },
    });
    expect(normaliseChatRequest(body)).not.toHaveProperty("functions");
  });
});

describe("completion request (spec 4.3)", () => {
  it.each([
    [{ logprobs: 6 }, "logprobs"],
    [{ best_of: 21 }, "best_of"],
    [{ best_of: 2, n: 2 }, "best_of"],
    [{ best_of: 3, stream: true }, "best_of"],
    [{ max_tokens: -1 }, "max_tokens"],
    [{ prompt: { text: "x" } }, "prompt"],
  ])("rejects %j naming %s", (extra, param) => {
    expect(paramOf(completionRequest, { model: "m", prompt: "p", ...extra })).toBe(param);
  });

  it("accepts token arrays, best_of above n and the default best_of 1", () => {
    expect(paramOf(completionRequest, { model: "m", prompt: [[1, 2], [3]], best_of: 3, n: 2 })).toBeUndefined();
    expect(paramOf(completionRequest, { model: "m", prompt: "p", best_of: 1 })).toBeUndefined();
  });
});

describe("embedding request", () => {
  it("validates input and dimensions", () => {
    expect(paramOf(embeddingRequest, { model: "m", input: [] })).toBe("input");
    expect(paramOf(embeddingRequest, { model: "m", input: "x", dimensions: 0 })).toBe("dimensions");
    expect(paramOf(embeddingRequest, { model: "m", input: ["a", "b"], input_type: "search_query" })).toBeUndefined();
  });
});
