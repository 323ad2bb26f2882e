import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  chatUsageFromResponses,
  inputTexts,
  newResponseId,
  outputItemId,
  outputTexts,
  presentEvent,
  presentResponse,
  RESPONSES_BETA,
  responseFromChat,
  responsesFormat,
  responsesUsageFromChat,
  schemaOf,
} from "../../../../core/inference/formats/responses/index.ts";
import type { TransformContext } from "../../../../core/providers/types.ts";

function context(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "anthropic", apiKey: "k" },
    route: "responses",
    stream: false,
    model: "claude-sonnet-4-5",
    now: 1_767_225_600,
    requestId: "req-answer-1",
    includeUsage: false,
    ...overrides,
  };
}

function completion(message: Record<string, any>, extra: Record<string, any> = {}) {
  return {
    id: "chatcmpl-1",
    object: "chat.completion",
    created: 1_767_225_600,
    model: "claude-sonnet-4-5-20250929",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
    usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 },
    ...extra,
  };
}

const ctx = context();
const msgId = outputItemId(ctx.requestId, "msg", 0);

describe("chat completion -> Response", () => {
  it("builds every field of spec 2.1 for a text answer, echoing the request", () => {
    const body = {
      model: "claude-sonnet-4-5",
      input: "Capital of France?",
      instructions: "Be brief.",
      metadata: { session: "s1" },
      previous_response_id: "resp_prev",
      max_output_tokens: 100,
      user: "u1",
    };
    const response = responseFromChat(completion({ content: "Paris." }), body, ctx);
    expect(response).toEqual({
      id: newResponseId(ctx.requestId),
      object: "response",
      created_at: ctx.now,
      status: "completed",
      background: false,
      completed_at: expect.any(Number),
      error: null,
      frequency_penalty: 0,
      incomplete_details: null,
      instructions: "Be brief.",
      max_output_tokens: 100,
      max_tool_calls: null,
      model: "claude-sonnet-4-5-20250929",
      output: [
        {
          id: msgId,
          type: "message",
          status: "completed",
          content: [{ type: "output_text", annotations: [], logprobs: [], text: "Paris." }],
          role: "assistant",
        },
      ],
      output_text: "Paris.",
      parallel_tool_calls: true,
      presence_penalty: 0,
      previous_response_id: "resp_prev",
      prompt_cache_key: null,
      prompt_cache_retention: null,
      reasoning: { effort: null, summary: null },
      safety_identifier: null,
      service_tier: "default",
      store: true,
      temperature: 1,
      text: { format: { type: "text" }, verbosity: "medium" },
      tool_choice: "auto",
      tools: [],
      top_logprobs: 0,
      top_p: 1,
      truncation: "disabled",
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        output_tokens: 5,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 25,
      },
      user: "u1",
      metadata: { session: "s1" },
    });
    expect(response.completed_at).toBeGreaterThanOrEqual(ctx.now);
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(msgId).toMatch(/^msg_[0-9a-f]{48}$/);
  });

  it("has the fields of OpenAI's Response object, in its order (plus the output_text aggregate)", () => {
    const documented = JSON.parse(readFileSync("test/fixtures/openai/responses-text.json", "utf8"));
    const response = responseFromChat(completion({ content: "Paris is the capital of France." }), { model: "m" }, ctx);
    expect(Object.keys(response).filter((key) => key !== "output_text")).toEqual(Object.keys(documented));
    expect(Object.keys(response.output[0])).toEqual(Object.keys(documented.output[0]));
    expect(response.output[0].content).toEqual(documented.output[0].content);
    expect(Object.keys(response.usage).sort()).toEqual(Object.keys(documented.usage).sort());
    // A native answer's usage reads the same way.
    expect(responsesFormat.usageOf(documented)).toEqual({
      prompt_tokens: 14,
      completion_tokens: 8,
      total_tokens: 22,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
  });

  it("derives ids from the request id: stable for one request, different for another", () => {
    const again = responseFromChat(completion({ content: "x" }), { model: "m" }, ctx);
    const other = responseFromChat(completion({ content: "x" }), { model: "m" }, context({ requestId: "req-2" }));
    expect(again.id).toBe(newResponseId(ctx.requestId));
    expect(other.id).not.toBe(again.id);
    expect(other.output[0].id).not.toBe(again.output[0].id);
  });

  it("echoes the request's settings", () => {
    const body = {
      model: "m",
      tools: [{ type: "function", name: "f", parameters: { type: "object" } }],
      tool_choice: "required",
      parallel_tool_calls: false,
      temperature: 0.3,
      top_p: 0.5,
      reasoning: { effort: "high", generate_summary: "concise" },
      text: { format: { type: "json_object" }, verbosity: "low" },
      truncation: "auto",
      store: false,
      top_logprobs: 2,
      service_tier: "flex",
    };
    const response = responseFromChat(completion({ content: "{}" }), body, ctx);
    expect(response).toMatchObject({
      tools: body.tools,
      tool_choice: "required",
      parallel_tool_calls: false,
      temperature: 0.3,
      top_p: 0.5,
      reasoning: { effort: "high", summary: "concise" },
      text: { format: { type: "json_object" }, verbosity: "low" },
      truncation: "auto",
      store: false,
      top_logprobs: 2,
      service_tier: "flex",
      user: null,
      metadata: {},
    });
  });

  it("turns tool calls into function_call items after the text, and reasoning into a summary before it", () => {
    const response = responseFromChat(
      completion(
        {
          content: "Checking both.",
          reasoning_content: "Two cities: two calls.",
          tool_calls: [
            { id: "call_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
            { id: "call_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Lyon"}' } },
          ],
        },
        { usage: undefined },
      ),
      { model: "m" },
      ctx,
    );
    expect(response.output).toEqual([
      {
        id: outputItemId(ctx.requestId, "rs", 0),
        type: "reasoning",
        summary: [{ type: "summary_text", text: "Two cities: two calls." }],
      },
      {
        id: msgId,
        type: "message",
        status: "completed",
        content: [{ type: "output_text", annotations: [], logprobs: [], text: "Checking both." }],
        role: "assistant",
      },
      {
        id: outputItemId(ctx.requestId, "fc", 0),
        type: "function_call",
        status: "completed",
        arguments: '{"city":"Paris"}',
        call_id: "call_a",
        name: "get_weather",
      },
      {
        id: outputItemId(ctx.requestId, "fc", 1),
        type: "function_call",
        status: "completed",
        arguments: '{"city":"Lyon"}',
        call_id: "call_b",
        name: "get_weather",
      },
    ]);
    expect(response.output_text).toBe("Checking both.");
    expect(response.usage).toBeNull();
  });

  it("has no message item for a tool-call-only answer, and an empty one for an empty answer", () => {
    const calls = responseFromChat(
      completion({
        content: null,
        tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }],
      }),
      { model: "m" },
      ctx,
    );
    expect(calls.output.map((item: any) => item.type)).toEqual(["function_call"]);
    expect(calls.output_text).toBe("");
    const empty = responseFromChat(completion({ content: "" }), { model: "m" }, ctx);
    expect(empty.output).toEqual([
      {
        id: msgId,
        type: "message",
        status: "completed",
        content: [{ type: "output_text", annotations: [], logprobs: [], text: "" }],
        role: "assistant",
      },
    ]);
  });

  it("is incomplete with max_output_tokens on finish_reason length, content_filter on a filtered answer", () => {
    const cut = completion({ content: "Once upon a" });
    cut.choices[0]!.finish_reason = "length";
    const response = responseFromChat(cut, { model: "m", max_output_tokens: 16 }, ctx);
    expect(response.status).toBe("incomplete");
    expect(response.incomplete_details).toEqual({ reason: "max_output_tokens" });
    expect(response.output[0].status).toBe("incomplete");
    expect(responsesFormat.isComplete(response)).toBe(false);

    const filtered = completion({ content: "" });
    filtered.choices[0]!.finish_reason = "content_filter";
    const blocked = responseFromChat(filtered, { model: "m" }, ctx);
    expect(blocked.status).toBe("incomplete");
    expect(blocked.incomplete_details).toEqual({ reason: "content_filter" });
    expect(responsesFormat.isComplete(responseFromChat(completion({ content: "ok" }), { model: "m" }, ctx))).toBe(true);
  });

  it("gives a refusal as a refusal part", () => {
    const response = responseFromChat(
      completion({ content: null, refusal: "I can't help with that." }),
      { model: "m" },
      ctx,
    );
    expect(response.output[0].content).toEqual([{ type: "refusal", refusal: "I can't help with that." }]);
    expect(response.output_text).toBe("");
  });

  it("maps chat logprobs onto the output_text part", () => {
    const answer = completion({ content: "Hi" });
    (answer.choices[0] as any).logprobs = {
      content: [
        {
          token: "Hi",
          logprob: -0.1,
          bytes: [72, 105],
          top_logprobs: [{ token: "Hi", logprob: -0.1, bytes: [72, 105] }],
        },
      ],
    };
    const response = responseFromChat(answer, { model: "m" }, ctx);
    expect(response.output[0].content[0].logprobs).toEqual([
      {
        token: "Hi",
        logprob: -0.1,
        bytes: [72, 105],
        top_logprobs: [{ token: "Hi", logprob: -0.1, bytes: [72, 105] }],
      },
    ]);
  });

  it("reports cached and reasoning tokens in usage (spec 2.2), and back in chat shape", () => {
    const chatUsage = {
      prompt_tokens: 1200,
      completion_tokens: 300,
      total_tokens: 1500,
      prompt_tokens_details: { cached_tokens: 1024, cache_creation_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 256 },
    };
    const response = responseFromChat(completion({ content: "x" }, { usage: chatUsage }), { model: "m" }, ctx);
    expect(response.usage).toEqual({
      input_tokens: 1200,
      input_tokens_details: { cached_tokens: 1024, cache_write_tokens: 100 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 256 },
      total_tokens: 1500,
    });
    expect(responsesFormat.usageOf(response)).toEqual(chatUsage);
    expect(responsesUsageFromChat({ prompt_tokens: 3, completion_tokens: 4 } as any)?.total_tokens).toBe(7);
    expect(chatUsageFromResponses(null)).toBeUndefined();
    expect(responsesFormat.usageOf({ usage: null })).toBeUndefined();
  });
});

describe("presentResponse", () => {
  const stored = responseFromChat(
    completion({ content: "Hi" }, { usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
    { model: "m", reasoning: { effort: "low", summary: "auto" }, text: { verbosity: "high" } },
    ctx,
  );

  it("finds the schema in x-gateway-beta, among several betas", () => {
    expect(RESPONSES_BETA).toBe("use-responses-api-2026-07-30");
    expect(schemaOf(null)).toBe("default");
    expect(schemaOf("")).toBe("default");
    expect(schemaOf("server-side-mcp-2026-06-01")).toBe("default");
    expect(schemaOf("use-responses-api-2026-07-30")).toBe("2026-07-30");
    expect(schemaOf("server-side-mcp-2026-06-01, use-responses-api-2026-07-30")).toBe("2026-07-30");
  });

  it("default: every field of the object, reasoning with generate_summary, usage with spec 2.2's fields", () => {
    const presented = presentResponse(stored, "default");
    // Spec 2.1's fields and every other field OpenAI's Response schema has (clients validate against it).
    expect(Object.keys(presented).sort()).toEqual(Object.keys(stored).sort());
    expect(presented.reasoning).toEqual({ effort: "low", summary: "auto", generate_summary: "auto" });
    expect(presented.text).toEqual({ format: { type: "text" }, verbosity: "high" });
    expect(presented.usage).toEqual({
      input_tokens: 1,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 2,
    });
    const sparse = presentResponse({ ...stored, usage: { input_tokens: 3, output_tokens: 1 } }, "default");
    expect(sparse.usage).toEqual({
      input_tokens: 3,
      input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      output_tokens: 1,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 0,
    });
  });

  it("default: queued shows as in_progress, cancelled as failed with error code cancelled", () => {
    expect(presentResponse({ ...stored, status: "queued", usage: null }, "default").status).toBe("in_progress");
    const cancelled = presentResponse({ ...stored, status: "cancelled" }, "default");
    expect(cancelled.status).toBe("failed");
    expect(cancelled.error).toMatchObject({ code: "cancelled" });
    expect(typeof cancelled.error.message).toBe("string");
  });

  it("2026-07-30: today's OpenAI object, statuses queued and cancelled as they are", () => {
    const presented = presentResponse(stored, "2026-07-30");
    expect(presented).toEqual(stored);
    expect(presented).toMatchObject({
      background: false,
      service_tier: "default",
      store: true,
      top_logprobs: 0,
      max_tool_calls: null,
      prompt_cache_key: null,
      safety_identifier: null,
      reasoning: { effort: "low", summary: "auto" },
      text: { verbosity: "high" },
    });
    expect(presentResponse({ ...stored, status: "cancelled" }, "2026-07-30").status).toBe("cancelled");
    expect(presentResponse({ ...stored, status: "queued" }, "2026-07-30").status).toBe("queued");
    expect(
      presentResponse({ ...stored, reasoning: { effort: "low", generate_summary: "detailed" } }, "2026-07-30")
        .reasoning,
    ).toEqual({ effort: "low", summary: "detailed" });
  });

  it("presents the Response inside stream events", () => {
    const event = { type: "response.queued", sequence_number: 0, response: { ...stored, status: "queued" } };
    const presented = presentEvent(event, "default");
    expect(presented.type).toBe("response.in_progress");
    expect((presented.response as any).status).toBe("in_progress");
    expect(presented.response).toMatchObject({ store: true, completed_at: expect.any(Number) });
    expect(presentEvent(event, "2026-07-30")).toBe(event);
    const delta = { type: "response.output_text.delta", sequence_number: 3, delta: "x" };
    expect(presentEvent(delta, "default")).toBe(delta);
  });
});

describe("guardrail texts", () => {
  it("finds the instructions and every message text, judging the last message item", () => {
    const body = {
      instructions: "Be kind.",
      input: [
        { role: "user", content: "first" },
        { type: "function_call_output", call_id: "c", output: "tool says" },
        { type: "message", role: "assistant", content: [{ type: "output_text", text: "answer", annotations: [] }] },
        {
          role: "user",
          content: [
            { type: "input_text", text: "second" },
            { type: "input_image", image_url: "https://x/y.png", detail: "auto" },
            { type: "input_text", text: "third" },
          ],
        },
        { type: "reasoning", summary: [{ type: "summary_text", text: "hidden" }] },
      ],
    };
    const found = inputTexts(body);
    expect(found.slots).toEqual([
      { path: ["instructions"], text: "Be kind." },
      { path: ["input", 0, "content"], text: "first" },
      { path: ["input", 2, "content", 0, "text"], text: "answer" },
      { path: ["input", 3, "content", 0, "text"], text: "second" },
      { path: ["input", 3, "content", 2, "text"], text: "third" },
    ]);
    expect(found.judged).toEqual({ from: 3, to: 5 });
  });

  it("judges a string input, or the instructions when there is no message", () => {
    expect(inputTexts({ instructions: "sys", input: "hello" })).toEqual({
      slots: [
        { path: ["instructions"], text: "sys" },
        { path: ["input"], text: "hello" },
      ],
      judged: { from: 1, to: 2 },
    });
    expect(inputTexts({ instructions: "sys", input: [] }).judged).toEqual({ from: 0, to: 1 });
  });

  it("finds each output_text part of the answer, all judged, and the aggregate after them", () => {
    const answer = JSON.parse(
      readFileSync("test/fixtures/openai/responses-stream-reasoning.sse", "utf8").split("\n").at(-3)!.slice(6),
    ).response;
    answer.output_text = "2 + 2 = 4";
    const found = outputTexts(answer);
    expect(found.slots).toEqual([
      { path: ["output", 1, "content", 0, "text"], text: "2 + 2 = 4" },
      { path: ["output_text"], text: "2 + 2 = 4" },
    ]);
    expect(found.judged).toEqual({ from: 0, to: 1 });
  });
});
