import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { responsesRequest, responsesToChat } from "../../../../core/inference/formats/responses/index.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { validate } from "../../../../core/http/json.ts";

const fixture = (name: string) => JSON.parse(readFileSync(`test/fixtures/openai/${name}`, "utf8"));

/** Validates as the handler does, then translates. */
const toChat = (body: Record<string, any>) => responsesToChat(validate(responsesRequest, { model: "m", ...body }));

function rejection(fn: () => unknown): HttpError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error("expected an HttpError");
}

const invalid = (body: Record<string, any>) => rejection(() => validate(responsesRequest, { model: "m", ...body }));

describe("responses request schema", () => {
  it("accepts OpenAI's documented request shapes, hosted tools and unknown top-level fields", () => {
    const body = validate(responsesRequest, {
      ...fixture("responses-request.json"),
      tools: [{ type: "web_search" }, { type: "mcp", server_label: "x", server_url: "https://mcp.example.com" }],
      prompt_cache_retention: "24h",
      top_k: 5,
    });
    expect(body.top_k).toBe(5);
    expect(body.tools).toHaveLength(2);
    expect(validate(responsesRequest, { model: "m", input: [{ type: "web_search_call", id: "ws_1" }] })).toBeTruthy();
    expect(validate(responsesRequest, { model: "m", input: [{ id: "msg_1" }] })).toBeTruthy();
  });

  it("requires a model", () => {
    expect(rejection(() => validate(responsesRequest, { input: "hi" })).param).toBe("model");
  });

  it.each([
    [{ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) }, /at most 16 pairs/],
    [{ metadata: { ["k".repeat(65)]: "v" } }, /at most 64 characters/],
    [{ metadata: { key: "v".repeat(513) } }, /at most 512 characters/],
    [{ metadata: { key: 1 } }, /must be strings/],
  ])("refuses metadata over the limits of spec 2.8, naming metadata (%#)", (body, message) => {
    const error = invalid(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe("metadata");
    expect(error.message).toMatch(message);
  });

  it("accepts metadata at the limits", () => {
    const metadata = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [`${i}`.padEnd(64, "k"), "v".repeat(512)]),
    );
    expect(validate(responsesRequest, { model: "m", metadata }).metadata).toEqual(metadata);
  });

  it.each([
    [{ temperature: 2.5 }, "temperature"],
    [{ top_p: -0.1 }, "top_p"],
    [{ max_output_tokens: 0 }, "max_output_tokens"],
    [{ max_output_tokens: 1.5 }, "max_output_tokens"],
    [{ top_logprobs: 21 }, "top_logprobs"],
    [{ truncation: "middle" }, "truncation"],
    [{ reasoning: { effort: "extreme" } }, "reasoning.effort"],
    [{ text: { format: { type: "json_schema", name: "x" } } }, "text.format.schema"],
    [{ text: { format: { type: "yaml" } } }, "text.format.type"],
    [{ tools: [{ type: "function" }] }, "tools[0].name"],
    [{ tools: [{ type: "function", name: "f", parameters: "none" }] }, "tools[0].parameters"],
    [{ tool_choice: "sometimes" }, "tool_choice"],
    [{ tool_choice: { type: "function" } }, "tool_choice.name"],
    [{ input: 42 }, "input"],
    [{ input: [{ role: "robot", content: "x" }] }, "input[0].role"],
    [{ input: [{ role: "user", content: [{ type: "input_text", text: 1 }] }] }, "input[0].content[0].text"],
    [{ input: [{ role: "user", content: [{ type: "input_image", detail: "huge" }] }] }, "input[0].content[0].detail"],
    [{ input: [{ type: "function_call", name: "f", arguments: "{}" }] }, "input[0].call_id"],
    [{ input: [{ type: "function_call_output", call_id: "c" }] }, "input[0].output"],
    [{ input: ["hi", { foo: 1 }] }, "input"],
    [{ input: [{ foo: 1 }] }, "input[0].type"],
    [{ stream_options: { include_obfuscation: false } }, "stream_options"],
    [{ background: true, store: false }, "background"],
    [{ parallel_tool_calls: "yes" }, "parallel_tool_calls"],
  ])("names the bad param in its 400 (%j)", (body, param) => {
    const error = invalid(body);
    expect(error.status).toBe(400);
    expect(error.param).toBe(param);
  });
});

describe("responses request -> chat completions", () => {
  it("translates every input item kind of a documented request", () => {
    const chat = responsesToChat(validate(responsesRequest, fixture("responses-request.json")));
    expect(chat.messages).toEqual([
      { role: "system", content: "You are a concise travel assistant." },
      { role: "developer", content: "Answer in metric units." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is the weather in Paris? Here is a photo." },
          { type: "image_url", image_url: { url: "https://example.com/paris.jpg", detail: "low" } },
        ],
      },
      // The reasoning item is dropped; the assistant text and the two calls after it are one chat turn.
      {
        role: "assistant",
        content: "Let me check.",
        tool_calls: [
          { id: "call_01", type: "function", function: { name: "get_weather", arguments: '{"location":"Paris"}' } },
          { id: "call_02", type: "function", function: { name: "get_weather", arguments: '{"location":"Lyon"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_01", content: '{"temperature":18}' },
      { role: "tool", tool_call_id: "call_02", content: '{"temperature":21}' },
      {
        role: "user",
        content: [
          { type: "text", text: "Summarise this file." },
          { type: "file", file: { file_data: "data:application/pdf;base64,JVBERi0xLjQK", filename: "notes.pdf" } },
        ],
      },
    ]);
    expect(chat.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Current temperature for a city.",
          parameters: {
            type: "object",
            properties: { location: { type: "string" } },
            required: ["location"],
            additionalProperties: false,
          },
          strict: true,
        },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
    expect(chat.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "weather",
        schema: {
          type: "object",
          properties: { summary: { type: "string" } },
          required: ["summary"],
          additionalProperties: false,
        },
        strict: true,
      },
    });
    expect(chat).toMatchObject({
      model: "gpt-4.1",
      reasoning_effort: "low",
      max_completion_tokens: 512,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      user: "user-1234",
      stream: true,
      stream_options: { include_usage: true },
    });
    // The gateway's and the Responses API's own fields never reach a chat provider.
    for (const field of [
      "metadata",
      "store",
      "truncation",
      "previous_response_id",
      "include",
      "instructions",
      "input",
      "text",
      "reasoning",
      "max_output_tokens",
      "background",
    ]) {
      expect(chat).not.toHaveProperty(field);
    }
  });

  it("sends a string input as one user message after the instructions", () => {
    expect(toChat({ input: "Hello", instructions: "Be brief." }).messages).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "Hello" },
    ]);
  });

  it("keeps one text part as a string, several as parts, and joins an assistant's texts", () => {
    const chat = toChat({
      input: [
        { role: "user", content: [{ type: "input_text", text: "one" }] },
        {
          role: "user",
          content: [
            { type: "input_text", text: "a" },
            { type: "input_text", text: "b" },
          ],
        },
        {
          type: "message",
          role: "assistant",
          content: [
            { type: "output_text", text: "x", annotations: [] },
            { type: "output_text", text: "y", annotations: [] },
          ],
        },
        { role: "system", content: "Stay on topic." },
      ],
    });
    expect(chat.messages).toEqual([
      { role: "user", content: "one" },
      {
        role: "user",
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      },
      { role: "assistant", content: "xy" },
      { role: "system", content: "Stay on topic." },
    ]);
  });

  it("makes calls without an assistant text their own assistant message, and a later call a new turn", () => {
    const chat = toChat({
      input: [
        { role: "user", content: "weather?" },
        { type: "function_call", call_id: "c1", name: "w", arguments: "{}" },
        { type: "function_call_output", call_id: "c1", output: "sunny" },
        { type: "function_call", call_id: "c2", name: "w", arguments: "{}" },
      ],
    });
    expect(
      chat.messages.map((message: any) => [message.role, message.tool_calls?.map((call: any) => call.id)]),
    ).toEqual([
      ["user", undefined],
      ["assistant", ["c1"]],
      ["tool", undefined],
      ["assistant", ["c2"]],
    ]);
    expect(chat.messages[1].content).toBeNull();
  });

  it("maps tool_choice strings and allowed tools, json_object, logprobs and the same-named fields", () => {
    const tools = [{ type: "function", name: "f" }];
    expect(toChat({ input: "x", tools, tool_choice: "required" }).tool_choice).toBe("required");
    // Without tools, tool settings are not sent (chat providers refuse them alone).
    const toolless = toChat({ input: "x", tool_choice: "none", parallel_tool_calls: true });
    expect(toolless).not.toHaveProperty("tool_choice");
    expect(toolless).not.toHaveProperty("parallel_tool_calls");
    expect(
      toChat({
        input: "x",
        tools,
        tool_choice: { type: "allowed_tools", mode: "auto", tools: [{ type: "function", name: "f" }] },
      }).tool_choice,
    ).toEqual({
      type: "allowed_tools",
      allowed_tools: { mode: "auto", tools: [{ type: "function", function: { name: "f" } }] },
    });
    const chat = toChat({
      input: "x",
      text: { format: { type: "json_object" }, verbosity: "low" },
      top_logprobs: 3,
      service_tier: "flex",
      safety_identifier: "u1",
      prompt_cache_key: "k",
      stream: false,
      top_k: 40,
    });
    expect(chat).toMatchObject({
      response_format: { type: "json_object" },
      verbosity: "low",
      logprobs: true,
      top_logprobs: 3,
      service_tier: "flex",
      safety_identifier: "u1",
      prompt_cache_key: "k",
      top_k: 40,
    });
    expect(chat).not.toHaveProperty("stream");
    expect(chat).not.toHaveProperty("stream_options");
    expect(toChat({ input: "x", text: { format: { type: "text" } } })).not.toHaveProperty("response_format");
    expect(toChat({ input: "x", include: ["message.output_text.logprobs"] })).toMatchObject({ logprobs: true });
    expect(toChat({ input: "x", reasoning: { effort: null, summary: "auto" } })).not.toHaveProperty("reasoning_effort");
  });

  it.each([
    [{ type: "web_search" }],
    [{ type: "file_search", vector_store_ids: ["vs_1"] }],
    [{ type: "computer_use_preview", display_width: 1024, display_height: 768, environment: "browser" }],
    [{ type: "code_interpreter", container: { type: "auto" } }],
    [{ type: "image_generation" }],
    [{ type: "mcp", server_label: "deepwiki", server_url: "https://mcp.example.com" }],
    [{ type: "local_shell" }],
    [{ type: "custom", name: "grammar" }],
  ])("refuses the hosted tool %j: unsupported_parameter on tools, naming the type", (tool) => {
    const error = rejection(() => toChat({ input: "x", tools: [{ type: "function", name: "f" }, tool] }));
    expect(error.status).toBe(400);
    expect(error.param).toBe("tools");
    expect(error.code).toBe("unsupported_parameter");
    expect(error.message).toContain(`'${tool.type}'`);
    expect(error.message).toContain("native Responses API");
  });

  it("refuses item references, hosted-tool items and what chat cannot carry, naming input", () => {
    for (const input of [
      [{ type: "item_reference", id: "msg_1" }],
      [{ id: "msg_1" }],
      [{ type: "web_search_call", id: "ws_1", status: "completed" }],
      [{ role: "user", content: [{ type: "input_image", file_id: "file_1", detail: "auto" }] }],
      [{ role: "user", content: [{ type: "input_file", file_url: "https://example.com/a.pdf" }] }],
      [{ type: "function_call_output", call_id: "c", output: [{ type: "input_image", image_url: "https://x/y.png" }] }],
    ]) {
      const error = rejection(() => toChat({ input }));
      expect(error.status).toBe(400);
      expect(error.param).toBe("input");
    }
    expect(rejection(() => toChat({ input: [{ id: "msg_9" }] })).message).toContain("msg_9");
  });

  it("refuses a hosted tool_choice, stateful fields and an empty input", () => {
    const tools = [{ type: "function", name: "f" }];
    expect(rejection(() => toChat({ input: "x", tools, tool_choice: { type: "file_search" } })).param).toBe(
      "tool_choice",
    );
    expect(rejection(() => toChat({ input: "x", conversation: "conv_1" })).param).toBe("conversation");
    expect(rejection(() => toChat({ input: "x", prompt: { id: "pmpt_1" } })).param).toBe("prompt");
    expect(rejection(() => toChat({ input: [] })).param).toBe("input");
    expect(rejection(() => toChat({})).param).toBe("input");
  });
});
