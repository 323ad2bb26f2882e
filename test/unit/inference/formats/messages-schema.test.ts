import { describe, expect, it } from "vitest";
import { countTokensRequest, messagesRequest } from "../../../../core/inference/formats/messages/index.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { validate } from "../../../../core/http/json.ts";

const base = { model: "claude-sonnet-4-5", max_tokens: 1024, messages: [{ role: "user", content: "Hi" }] };

function rejected(schema: Parameters<typeof validate>[0], body: unknown): HttpError {
  try {
    validate(schema, body);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error("expected a 400");
}

describe("messages request schema", () => {
  it("accepts every documented field and keeps unknown ones", () => {
    const body = {
      ...base,
      system: [{ type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } }],
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "Look" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBO" } },
            { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
            { type: "document", source: { type: "base64", media_type: "application/pdf", data: "JVBE" } },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "hmm", signature: "sig" },
            { type: "redacted_thinking", data: "abc" },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: [{ type: "text", text: "18C" }], is_error: false },
          ],
        },
      ],
      tools: [
        { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: {} } },
        { type: "web_search_20250305", name: "web_search", max_uses: 3 },
      ],
      tool_choice: { type: "any", disable_parallel_tool_use: true },
      thinking: { type: "enabled", budget_tokens: 2048 },
      stop_sequences: ["END"],
      temperature: 1,
      top_p: 0.9,
      top_k: 40,
      metadata: { user_id: "user-1" },
      stream: true,
      service_tier: "auto",
      container: "ctr_1",
    };
    expect(validate(messagesRequest, body)).toEqual(body);
  });

  it("accepts block kinds added to the API later with only their type", () => {
    const body = { ...base, messages: [{ role: "user", content: [{ type: "search_result", anything: 1 }] }] };
    expect(validate(messagesRequest, body)).toEqual(body);
  });

  it.each([
    ["max_tokens missing", { model: "m", messages: base.messages }, "max_tokens"],
    ["a bad role", { ...base, messages: [{ role: "system", content: "x" }] }, "messages[0].role"],
    ["temperature above 1", { ...base, temperature: 1.5 }, "temperature"],
    ["no messages", { ...base, messages: [] }, "messages"],
    [
      "a text block without text",
      { ...base, messages: [{ role: "user", content: [{ type: "text" }] }] },
      "messages[0].content[0].text",
    ],
    [
      "an image without media_type",
      { ...base, messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", data: "x" } }] }] },
      "messages[0].content[0].source.media_type",
    ],
    [
      "a tool_result without tool_use_id",
      { ...base, messages: [{ role: "user", content: [{ type: "tool_result", content: "x" }] }] },
      "messages[0].content[0].tool_use_id",
    ],
    ["a custom tool without input_schema", { ...base, tools: [{ name: "f" }] }, "tools[0].input_schema"],
    [
      "a thinking budget under 1024",
      { ...base, thinking: { type: "enabled", budget_tokens: 100 } },
      "thinking.budget_tokens",
    ],
    ["tool_choice tool without a name", { ...base, tool_choice: { type: "tool" } }, "tool_choice.name"],
    ["a bad service tier", { ...base, service_tier: "priority" }, "service_tier"],
  ])("answers 400 naming the param for %s", (_name, body, param) => {
    const error = rejected(messagesRequest, body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
    expect(error.message).toContain(param);
  });
});

describe("count_tokens request schema", () => {
  it("takes the body without max_tokens", () => {
    const body = { model: "claude-sonnet-4-5", messages: base.messages, system: "Be brief." };
    expect(validate(countTokensRequest, body)).toEqual(body);
  });

  it("still checks the messages and the model", () => {
    expect(rejected(countTokensRequest, { messages: base.messages }).param).toBe("model");
    expect(rejected(countTokensRequest, { model: "m", messages: [{ role: "tool", content: "x" }] }).param).toBe(
      "messages[0].role",
    );
  });
});
