import { describe, expect, it } from "vitest";
import { messagesFormat } from "../../../../core/inference/formats/messages/index.ts";
import { HttpError } from "../../../../core/http/errors.ts";

const base = { model: "gpt-4o", max_tokens: 512 };
const toChat = (body: Record<string, any>) => messagesFormat.toChat({ ...base, ...body });

function refused(body: Record<string, any>): HttpError {
  try {
    toChat(body);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error("expected a 400");
}

describe("messages -> chat: messages and blocks", () => {
  it("turns the system prompt (string or text blocks) into a system message", () => {
    expect(toChat({ system: "Be brief.", messages: [{ role: "user", content: "Hi" }] }).messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hi" },
    ]);
    const blocks = toChat({
      system: [
        { type: "text", text: "You are Claude.", cache_control: { type: "ephemeral" } },
        { type: "text", text: "Answer in French." },
      ],
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(blocks.messages[0]).toEqual({ role: "system", content: "You are Claude.\n\nAnswer in French." });
  });

  it("keeps text-only user blocks as one string and images as image_url parts", () => {
    const chat = toChat({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "One" },
            { type: "text", text: "Two" },
          ],
        },
        { role: "assistant", content: "Ok" },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
            { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "One\nTwo" },
      { role: "assistant", content: "Ok" },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
          { type: "image_url", image_url: { url: "https://example.com/cat.jpg" } },
        ],
      },
    ]);
  });

  it("turns documents into file parts (base64) or text (text and content sources)", () => {
    const chat = toChat({
      messages: [
        {
          role: "user",
          content: [
            {
              type: "document",
              source: { type: "base64", media_type: "application/pdf", data: "JVBERi0=" },
              title: "a.pdf",
            },
            { type: "document", source: { type: "text", media_type: "text/plain", data: "Plain words." } },
            { type: "document", source: { type: "content", content: [{ type: "text", text: "Inner" }] } },
          ],
        },
      ],
    });
    expect(chat.messages[0].content).toEqual([
      { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0=", filename: "a.pdf" } },
      { type: "text", text: "Plain words." },
      { type: "text", text: "Inner" },
    ]);
  });

  it("round-trips tools: tool_use -> tool_calls, tool_result -> tool messages before the user's text", () => {
    const chat = toChat({
      messages: [
        { role: "user", content: "Weather in Paris and Tokyo?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "Two calls.", signature: "sig" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "toolu_2", name: "get_weather", input: { city: "Tokyo" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "text", text: "Be quick." },
            { type: "tool_result", tool_use_id: "toolu_1", content: "18C" },
            {
              type: "tool_result",
              tool_use_id: "toolu_2",
              is_error: true,
              content: [
                { type: "text", text: "Service down" },
                { type: "image", source: { type: "url", url: "https://example.com/err.png" } },
              ],
            },
          ],
        },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "Weather in Paris and Tokyo?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "toolu_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_2", type: "function", function: { name: "get_weather", arguments: '{"city":"Tokyo"}' } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_1", content: "18C" },
      { role: "tool", tool_call_id: "toolu_2", content: "Service down" },
      {
        role: "user",
        content: [
          { type: "text", text: "Be quick." },
          { type: "image_url", image_url: { url: "https://example.com/err.png" } },
        ],
      },
    ]);
  });

  it("drops thinking blocks and assistant turns left empty by that", () => {
    const chat = toChat({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: [{ type: "redacted_thinking", data: "xyz" }] },
        { role: "user", content: "Again" },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "Hi" },
      { role: "user", content: "Again" },
    ]);
  });

  it("answers 400 naming the block for what chat cannot carry", () => {
    const fileImage = refused({
      messages: [{ role: "user", content: [{ type: "image", source: { type: "file", file_id: "file_1" } }] }],
    });
    expect(fileImage.param).toBe("messages[0].content[0].source");
    expect(fileImage.code).toBe("unsupported_parameter");
    const urlDocument = refused({
      messages: [
        { role: "user", content: "x" },
        { role: "user", content: [{ type: "document", source: { type: "url", url: "https://x/a.pdf" } }] },
      ],
    });
    expect(urlDocument.param).toBe("messages[1].content[0].source");
    expect(refused({ messages: [{ role: "user", content: [{ type: "search_result" }] }] }).param).toBe(
      "messages[0].content[0]",
    );
    expect(refused({ messages: [{ role: "assistant", content: [{ type: "server_tool_use" }] }] }).param).toBe(
      "messages[0].content[0]",
    );
  });
});

describe("messages -> chat: parameters", () => {
  const messages = [{ role: "user", content: "Hi" }];

  it("maps tools and every tool_choice", () => {
    const tools = [
      {
        name: "get_weather",
        description: "Weather",
        input_schema: { type: "object", properties: { city: { type: "string" } } },
      },
    ];
    const chat = toChat({ messages, tools, tool_choice: { type: "auto" } });
    expect(chat.tools).toEqual([
      {
        type: "function",
        function: { name: "get_weather", description: "Weather", parameters: tools[0]!.input_schema },
      },
    ]);
    expect(chat.tool_choice).toBe("auto");
    expect(toChat({ messages, tools, tool_choice: { type: "any" } }).tool_choice).toBe("required");
    expect(toChat({ messages, tools, tool_choice: { type: "none" } }).tool_choice).toBe("none");
    const forced = toChat({
      messages,
      tools,
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
    });
    expect(forced.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
    expect(forced.parallel_tool_calls).toBe(false);
    expect(toChat({ messages, tool_choice: { type: "any" } }).tool_choice).toBeUndefined();
  });

  it("refuses server tools with 400 unsupported_parameter on tools", () => {
    const error = refused({ messages, tools: [{ type: "web_search_20250305", name: "web_search" }] });
    expect(error.status).toBe(400);
    expect(error.param).toBe("tools");
    expect(error.code).toBe("unsupported_parameter");
  });

  it("maps sampling, stops, user and streaming; drops top_k", () => {
    const chat = toChat({
      messages,
      stop_sequences: ["END", "STOP"],
      temperature: 0.3,
      top_p: 0.8,
      top_k: 5,
      metadata: { user_id: "u-1" },
      service_tier: "auto",
      stream: true,
    });
    expect(chat).toEqual({
      model: "gpt-4o",
      messages,
      max_tokens: 512,
      stop: ["END", "STOP"],
      temperature: 0.3,
      top_p: 0.8,
      user: "u-1",
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it.each([
    [{ type: "enabled", budget_tokens: 1024 }, "low"],
    [{ type: "enabled", budget_tokens: 2048 }, "low"],
    [{ type: "enabled", budget_tokens: 8192 }, "medium"],
    [{ type: "enabled", budget_tokens: 8193 }, "high"],
    [{ type: "disabled" }, undefined],
  ])("thinking %j -> reasoning_effort %s", (thinking, effort) => {
    expect(toChat({ messages, thinking }).reasoning_effort).toBe(effort);
    expect(toChat({ messages, thinking }).thinking).toBeUndefined();
  });

  it("takes adaptive thinking's effort and structured output's schema from output_config", () => {
    const schema = { type: "object", properties: { a: { type: "string" } } };
    const chat = toChat({
      messages,
      thinking: { type: "adaptive" },
      output_config: { effort: "max", format: { type: "json_schema", schema } },
    });
    expect(chat.reasoning_effort).toBe("high");
    expect(chat.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "output", schema, strict: true },
    });
    expect(toChat({ messages, thinking: { type: "adaptive" } }).reasoning_effort).toBeUndefined();
  });
});
