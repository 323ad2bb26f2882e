import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  outputItemId,
  PIECE_CHARS,
  ResponsesEventAssembler,
  replayResponse,
  responseFromChat,
  responsesFormat,
} from "../../../../core/inference/formats/responses/index.ts";
import type { TypedEvent } from "../../../../core/providers/types.ts";
import { assembleStream } from "../../../../core/inference/gateway/stream/assembly.ts";
import type { TransformContext } from "../../../../core/providers/types.ts";
import { parseSse } from "../../../mocks/anthropic.ts";

function context(overrides: Partial<TransformContext> = {}): TransformContext {
  return {
    target: { provider: "groq", apiKey: "k" },
    route: "responses",
    stream: true,
    model: "llama-3.3-70b-versatile",
    now: 1_767_225_600,
    requestId: "req-stream-1",
    includeUsage: true,
    ...overrides,
  };
}

/** OpenAI's documented event sequence for one answer (test/fixtures/openai/responses-stream-*.sse). */
function fixtureEvents(name: string): TypedEvent[] {
  return parseSse(readFileSync(`test/fixtures/openai/${name}`, "utf8")).map((event) => JSON.parse(event.data));
}

const HEAD = {
  id: "chatcmpl-9",
  object: "chat.completion.chunk",
  created: 1_767_225_600,
  model: "llama-3.3-70b-versatile",
};

/** A chat.completion.chunk with one choice. */
function chunk(delta: Record<string, any>, finishReason: string | null = null): Record<string, any> {
  return { ...HEAD, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }] };
}

const usageChunk = (usage: Record<string, any>) => ({ ...HEAD, choices: [], usage });
const USAGE = { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 };

/** Every event the converter sends for `chunks`, then its end. */
function run(chunks: Record<string, any>[], body: Record<string, any> = { model: HEAD.model }, ctx = context()) {
  const converter = responsesFormat.streamFromChat(body, ctx);
  return [...chunks.flatMap((item) => converter.push(item)), ...converter.end()];
}

const typesOf = (events: TypedEvent[]) => events.map((event) => event.type);
/** Event types with runs of one type (a text's deltas) counted once: pieces differ, the sequence does not. */
const shapeOf = (events: TypedEvent[]) => typesOf(events).filter((type, index, all) => type !== all[index - 1]);
const terminal = (events: TypedEvent[]) => events.at(-1)!.response as Record<string, any>;

function expectSequenceNumbers(events: TypedEvent[]): void {
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
}

const textChunks = [
  chunk({ role: "assistant", content: "" }),
  chunk({ content: "Paris" }),
  chunk({ content: " is the capital" }),
  chunk({ content: " of France." }),
  chunk({}, "stop"),
  usageChunk(USAGE),
];

const toolChunks = [
  chunk({ role: "assistant", content: null }),
  chunk({
    tool_calls: [{ index: 0, id: "call_Xq3m", type: "function", function: { name: "get_weather", arguments: "" } }],
  }),
  ...['{"', "location", '":"', "Paris, France", '"}'].map((piece) =>
    chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }),
  ),
  chunk({}, "tool_calls"),
  usageChunk(USAGE),
];

const reasoningChunks = [
  chunk({ role: "assistant", reasoning_content: "**Adding numbers**" }),
  chunk({ reasoning_content: "\n\nTwo plus two is four." }),
  chunk({ content: "2 + 2" }),
  chunk({ content: " = 4" }),
  chunk({}, "stop"),
  usageChunk({ ...USAGE, completion_tokens_details: { reasoning_tokens: 9 } }),
];

describe("chat chunks -> Responses stream events", () => {
  it("sends OpenAI's event sequence for a text answer", () => {
    const events = run(textChunks);
    expect(typesOf(events)).toEqual(typesOf(fixtureEvents("responses-stream-text.sse")));
    expectSequenceNumbers(events);
    const id = outputItemId("req-stream-1", "msg", 0);
    const deltas = events.filter((event) => event.type === "response.output_text.delta");
    expect(deltas.map((event) => event.delta)).toEqual(["Paris", " is the capital", " of France."]);
    for (const delta of deltas) {
      expect(delta).toMatchObject({ item_id: id, output_index: 0, content_index: 0, logprobs: [] });
    }
    expect(events[0]!.response).toMatchObject({ status: "in_progress", output: [], usage: null });
    expect(events.find((event) => event.type === "response.output_text.done")).toMatchObject({
      text: "Paris is the capital of France.",
    });
    expect(terminal(events)).toMatchObject({
      status: "completed",
      output_text: "Paris is the capital of France.",
      usage: { input_tokens: 30, output_tokens: 12, total_tokens: 42 },
    });
  });

  it("sends OpenAI's event sequence for a function call", () => {
    const events = run(toolChunks, { model: "m", tools: [{ type: "function", name: "get_weather" }] });
    expect(typesOf(events)).toEqual(typesOf(fixtureEvents("responses-stream-function-call.sse")));
    expectSequenceNumbers(events);
    expect(events[2]).toMatchObject({
      type: "response.output_item.added",
      item: { type: "function_call", status: "in_progress", arguments: "", call_id: "call_Xq3m", name: "get_weather" },
    });
    // OpenAI's done event names the function (its OpenAPI document requires `name`).
    expect(events.find((event) => event.type === "response.function_call_arguments.done")).toMatchObject({
      name: "get_weather",
      arguments: '{"location":"Paris, France"}',
    });
  });

  it("sends OpenAI's event sequence for reasoning (as a summary) then text", () => {
    const events = run(reasoningChunks);
    expect(typesOf(events)).toEqual(typesOf(fixtureEvents("responses-stream-reasoning.sse")));
    expectSequenceNumbers(events);
    expect(terminal(events).output[0]).toEqual({
      id: outputItemId("req-stream-1", "rs", 0),
      type: "reasoning",
      summary: [{ type: "summary_text", text: "**Adding numbers**\n\nTwo plus two is four." }],
    });
    expect(terminal(events).usage.output_tokens_details).toEqual({ reasoning_tokens: 9 });
  });

  it.each([
    ["text", textChunks],
    ["function call", toolChunks],
    ["reasoning", reasoningChunks],
  ])("ends (%s) with the Response the JSON translation of the same answer gives", (_, chunks) => {
    const body = { model: "m", instructions: "Be brief.", metadata: { a: "b" } };
    const events = run(chunks, body);
    const answer = assembleStream(chunks) as Record<string, any>;
    expect(terminal(events)).toEqual(responseFromChat(answer, body, context()));
  });

  it("streams interleaved parallel tool calls after a text, each as its own function_call item", () => {
    const chunks = [
      chunk({ role: "assistant", content: "Checking both." }),
      chunk({
        tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "weather", arguments: "" } }],
      }),
      chunk({
        tool_calls: [{ index: 1, id: "call_b", type: "function", function: { name: "weather", arguments: "" } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":' } }] }),
      chunk({
        tool_calls: [
          { index: 1, function: { arguments: '"Lyon"}' } },
          { index: 0, function: { arguments: '"Paris"}' } },
        ],
      }),
      chunk({}, "tool_calls"),
      usageChunk(USAGE),
    ];
    const events = run(chunks);
    expectSequenceNumbers(events);
    const [first, second] = [outputItemId("req-stream-1", "fc", 0), outputItemId("req-stream-1", "fc", 1)];
    // The message is done before the first call opens.
    const messageDone = events.findIndex((event) => event.type === "response.output_item.done");
    const firstCallAdded = events.findIndex(
      (event) =>
        event.type === "response.output_item.added" && event.item && (event.item as any).type === "function_call",
    );
    expect(messageDone).toBeLessThan(firstCallAdded);
    const argumentsOf = (id: string) =>
      events
        .filter((event) => event.type === "response.function_call_arguments.delta" && event.item_id === id)
        .map((event) => event.delta)
        .join("");
    expect(argumentsOf(first)).toBe('{"city":"Paris"}');
    expect(argumentsOf(second)).toBe('{"city":"Lyon"}');
    const done = events.filter((event) => event.type === "response.function_call_arguments.done");
    expect(done.map((event) => [event.item_id, event.output_index, event.arguments])).toEqual([
      [first, 1, '{"city":"Paris"}'],
      [second, 2, '{"city":"Lyon"}'],
    ]);
    const response = terminal(events);
    expect(response.output.map((item: any) => [item.type, item.call_id ?? null])).toEqual([
      ["message", null],
      ["function_call", "call_a"],
      ["function_call", "call_b"],
    ]);
    expect(response).toEqual(responseFromChat(assembleStream(chunks) as any, { model: HEAD.model }, context()));
  });

  it("waits for the usage-only chunk before the terminal event, and sends nothing after it", () => {
    const converter = responsesFormat.streamFromChat({ model: "m" }, context());
    converter.push(chunk({ content: "Hi" }));
    const atFinish = converter.push(chunk({}, "stop"));
    expect(typesOf(atFinish)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
    ]);
    const atUsage = converter.push(usageChunk({ ...USAGE, prompt_tokens_details: { cached_tokens: 16 } }));
    expect(typesOf(atUsage)).toEqual(["response.completed"]);
    expect(atUsage[0]!.response).toMatchObject({
      usage: { input_tokens: 30, input_tokens_details: { cached_tokens: 16 }, output_tokens: 12 },
    });
    expect(converter.push(chunk({ content: "late" }))).toEqual([]);
    expect(converter.end()).toEqual([]);
  });

  it("does not end at the finish on running usage counts sent before it", () => {
    const converter = responsesFormat.streamFromChat({ model: "m" }, context());
    converter.push({
      ...chunk({ content: "Hi" }),
      usage: { prompt_tokens: 30, completion_tokens: 1, total_tokens: 31 },
    });
    expect(typesOf(converter.push(chunk({}, "stop")))).not.toContain("response.completed");
    const atUsage = converter.push(usageChunk(USAGE));
    expect(atUsage[0]!.response).toMatchObject({ usage: { output_tokens: 12 } });
  });

  it("ends at end() when no usage came, with usage null", () => {
    const events = run([chunk({ content: "Hi" }, "stop")]);
    expect(events.at(-1)!.type).toBe("response.completed");
    expect(terminal(events).usage).toBeNull();
  });

  it("takes content and the finish reason from one chunk; length makes the response incomplete", () => {
    const events = run([chunk({ role: "assistant", content: "Once upon a" }, "length"), usageChunk(USAGE)], {
      model: "m",
      max_output_tokens: 16,
    });
    expect(events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta)).toEqual([
      "Once upon a",
    ]);
    expect(events.at(-1)!.type).toBe("response.incomplete");
    expect(terminal(events)).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [{ status: "incomplete", content: [{ text: "Once upon a" }] }],
    });
  });

  it("a content filter ends the response incomplete, with an empty message when nothing was said", () => {
    const events = run([chunk({ role: "assistant", content: "" }, "content_filter"), usageChunk(USAGE)]);
    expect(typesOf(events)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.incomplete",
    ]);
    expect(terminal(events).incomplete_details).toEqual({ reason: "content_filter" });
  });

  it("a stream cut before its finish reason closes what is open and fails with server_error", () => {
    const events = run([chunk({ role: "assistant", content: "Half an ans" })]);
    expectSequenceNumbers(events);
    expect(typesOf(events).slice(-4)).toEqual([
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.failed",
    ]);
    expect(terminal(events)).toMatchObject({
      status: "failed",
      error: { code: "server_error" },
      output: [{ type: "message", status: "incomplete", content: [{ text: "Half an ans" }] }],
    });
    expect(typeof terminal(events).error.message).toBe("string");
    expect(typesOf(run([]))).toEqual(["response.created", "response.in_progress", "response.failed"]);
  });

  it("streams a refusal as a refusal part", () => {
    const events = run([
      chunk({ refusal: "I can't" }),
      chunk({ refusal: " help." }),
      chunk({}, "stop"),
      usageChunk(USAGE),
    ]);
    expect(typesOf(events).filter((type) => type.startsWith("response.refusal"))).toEqual([
      "response.refusal.delta",
      "response.refusal.delta",
      "response.refusal.done",
    ]);
    expect(terminal(events).output[0].content).toEqual([{ type: "refusal", refusal: "I can't help." }]);
  });
});

describe("replay and assembler", () => {
  const ctx = context({ requestId: "req-replay" });
  const longText = "word ".repeat(700); // 3500 characters: four pieces
  const answers = {
    text: responseFromChat(
      {
        model: "m-1",
        choices: [{ index: 0, message: { role: "assistant", content: longText }, finish_reason: "stop" }],
        usage: USAGE,
      },
      { model: "m" },
      ctx,
    ),
    tools: responseFromChat(
      {
        model: "m-1",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Both.",
              reasoning_content: "Think.",
              tool_calls: [
                { id: "c1", type: "function", function: { name: "f", arguments: `{"q":"${"x".repeat(1500)}"}` } },
                { id: "c2", type: "function", function: { name: "g", arguments: "{}" } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: {
          ...USAGE,
          prompt_tokens_details: { cached_tokens: 8 },
          completion_tokens_details: { reasoning_tokens: 3 },
        },
      },
      { model: "m" },
      ctx,
    ),
  };

  it("replays a text answer in pieces of at most 1024 characters, in OpenAI's sequence", () => {
    const events = replayResponse(answers.text);
    expectSequenceNumbers(events);
    const deltas = events.filter((event) => event.type === "response.output_text.delta");
    expect(deltas.length).toBe(Math.ceil(longText.length / PIECE_CHARS));
    for (const delta of deltas) expect((delta.delta as string).length).toBeLessThanOrEqual(PIECE_CHARS);
    expect(deltas.map((delta) => delta.delta).join("")).toBe(longText);
    expect(shapeOf(events)).toEqual(shapeOf(fixtureEvents("responses-stream-text.sse")));
    expect(events[0]!.response).toMatchObject({ status: "in_progress", output: [], usage: null });
  });

  it("replays the documented answers in the documented sequences", () => {
    for (const name of [
      "responses-stream-text.sse",
      "responses-stream-function-call.sse",
      "responses-stream-reasoning.sse",
    ]) {
      const documented = fixtureEvents(name);
      expect(shapeOf(replayResponse(documented.at(-1)!.response as any))).toEqual(shapeOf(documented));
    }
  });

  it.each(Object.entries(answers))("assembles the replay of an answer (%s) back into that answer", (_, answer) => {
    const assembler = responsesFormat.assembler();
    for (const event of replayResponse(answer)) assembler.add(event);
    expect(assembler.result()).toEqual(answer);
    expect(assembler.usage()).toEqual(responsesFormat.usageOf(answer));
    expect(assembler.model()).toBe("m-1");
  });

  it("assembles OpenAI's documented streams into their final Response", () => {
    for (const name of [
      "responses-stream-text.sse",
      "responses-stream-function-call.sse",
      "responses-stream-reasoning.sse",
    ]) {
      const events = fixtureEvents(name);
      const final = events.at(-1)!.response as Record<string, any>;
      const assembler = new ResponsesEventAssembler();
      // Without the terminal event the output is built from the item and delta events.
      for (const event of events.slice(0, -1)) assembler.add(event);
      expect(assembler.result().output).toEqual(final.output);
      expect(assembler.result().status).toBe("in_progress");
      expect(assembler.usage()).toBeUndefined();
      assembler.add(events.at(-1)!);
      expect(assembler.result()).toEqual(final);
      expect(assembler.usage()).toEqual({
        prompt_tokens: final.usage.input_tokens,
        completion_tokens: final.usage.output_tokens,
        total_tokens: final.usage.total_tokens,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: final.usage.output_tokens_details.reasoning_tokens },
      });
      expect(assembler.model()).toBe(final.model);
    }
  });

  it("assembles a stream cut short from its deltas (items still open included)", () => {
    const converter = responsesFormat.streamFromChat({ model: "m" }, ctx);
    const assembler = responsesFormat.assembler();
    for (const item of [chunk({ reasoning_content: "Hmm" }), chunk({ content: "Part" }), chunk({ content: "ial" })]) {
      for (const event of converter.push(item)) assembler.add(event);
    }
    expect(assembler.result().output).toEqual([
      { id: outputItemId("req-replay", "rs", 0), type: "reasoning", summary: [{ type: "summary_text", text: "Hmm" }] },
      {
        id: outputItemId("req-replay", "msg", 0),
        type: "message",
        status: "in_progress",
        content: [{ type: "output_text", annotations: [], logprobs: [], text: "Partial" }],
        role: "assistant",
      },
    ]);
    expect(assembler.result().output_text).toBe("Partial");
  });

  it("ignores what it cannot read", () => {
    const assembler = responsesFormat.assembler();
    expect(assembler.result()).toEqual({});
    for (const event of [
      { type: "response.output_text.delta", output_index: 0, content_index: 0, delta: "x" },
      { type: "response.output_item.added", output_index: 1e9, item: {} },
      { type: "response.output_item.added", output_index: "0", item: {} },
      { type: "response.completed", response: "nope" },
      { type: "error", code: "server_error", message: "boom", param: null },
    ]) {
      expect(() => assembler.add(event as TypedEvent)).not.toThrow();
    }
    expect(assembler.model()).toBeUndefined();
  });
});
