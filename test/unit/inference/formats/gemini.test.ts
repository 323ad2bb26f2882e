import { describe, expect, it } from "vitest";
import { HttpError } from "../../../../core/http/errors.ts";
import { geminiFormat } from "../../../../core/inference/formats/gemini/index.ts";
import { geminiRequest } from "../../../../core/inference/formats/gemini/schema.ts";
import type { TransformContext } from "../../../../core/providers/types.ts";

/** The Gemini inbound format's pure parts: request to chat, chat answers and chunks back, folding, texts. */

const ctx: TransformContext = {
  target: { provider: "openai" },
  route: "gemini",
  stream: true,
  model: "gpt-4o-mini",
  now: 1_700_000_000,
  requestId: "req-gemini",
  includeUsage: true,
};

const user = (text: string) => ({ role: "user", parts: [{ text }] });

function refusal(body: Record<string, unknown>): HttpError {
  try {
    geminiFormat.toChat({ model: "m", ...body });
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error("the body was translated");
}

describe("Gemini request -> chat", () => {
  it("turns, system instruction, media and generationConfig", () => {
    const chat = geminiFormat.toChat({
      model: "gpt-4o-mini",
      stream: true,
      systemInstruction: { parts: [{ text: "Be brief." }] },
      contents: [
        { role: "user", parts: [{ text: "What is this?" }, { inlineData: { mimeType: "image/png", data: "iVBOR" } }] },
        { role: "model", parts: [{ text: "Thinking...", thought: true }, { text: "A cat." }] },
        user("Thanks"),
      ],
      generationConfig: {
        temperature: 0.5,
        topP: 0.9,
        topK: 40,
        maxOutputTokens: 100,
        candidateCount: 2,
        stopSequences: ["END"],
        seed: 7,
        responseLogprobs: true,
        logprobs: 3,
        thinkingConfig: { thinkingBudget: 4096 },
      },
    });
    expect(chat).toEqual({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "Be brief." },
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: "data:image/png;base64,iVBOR" } },
          ],
        },
        { role: "assistant", content: "A cat." },
        { role: "user", content: "Thanks" },
      ],
      temperature: 0.5,
      top_p: 0.9,
      max_tokens: 100,
      n: 2,
      stop: ["END"],
      seed: 7,
      logprobs: true,
      top_logprobs: 3,
      reasoning_effort: "medium",
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it("function calls and responses: ids made up where Gemini gave none, responses matched by name", () => {
    const chat = geminiFormat.toChat({
      model: "m",
      contents: [
        user("Weather in Paris and Rome?"),
        {
          role: "model",
          parts: [
            { functionCall: { name: "get_weather", args: { city: "Paris" } }, thoughtSignature: "sig" },
            { functionCall: { name: "get_weather", args: { city: "Rome" } } },
          ],
        },
        {
          role: "user",
          parts: [
            { functionResponse: { name: "get_weather", response: { temperature: 21 } } },
            { functionResponse: { name: "get_weather", response: { temperature: 25 } } },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            { name: "get_weather", parameters: { type: "OBJECT", properties: { city: { type: "STRING" } } } },
            { name: "other", parametersJsonSchema: { type: "object", properties: {} } },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["get_weather"] } },
    });
    expect(chat.messages[1]).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [
        { id: "call_1_0", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        { id: "call_1_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
      ],
    });
    expect(chat.messages.slice(2)).toEqual([
      { role: "tool", tool_call_id: "call_1_0", content: '{"temperature":21}' },
      { role: "tool", tool_call_id: "call_1_1", content: '{"temperature":25}' },
    ]);
    expect(chat.tools[0].function.parameters).toEqual({ type: "object", properties: { city: { type: "string" } } });
    expect(chat.tools[1].function.parameters).toEqual({ type: "object", properties: {} });
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
  });

  it("refuses what chat cannot carry, naming the field", () => {
    expect(refusal({ contents: [user("Hi")], tools: [{ googleSearch: {} }] }).param).toBe("tools[0].googleSearch");
    expect(refusal({ contents: [user("Hi")], cachedContent: "cachedContents/x" }).param).toBe("cachedContent");
    expect(refusal({ contents: [user("Hi")], generationConfig: { responseModalities: ["AUDIO"] } }).param).toBe(
      "generationConfig.responseModalities",
    );
    expect(
      refusal({ contents: [{ role: "user", parts: [{ fileData: { fileUri: "gs://bucket/a.pdf" } }] }] }).param,
    ).toBe("contents[0].parts[0].fileData");
    const orphan = refusal({
      contents: [user("Hi"), { role: "user", parts: [{ functionResponse: { name: "x", response: {} } }] }],
    });
    expect(orphan.param).toBe("contents[1].parts[0]");
    expect(orphan.message).toContain("no earlier functionCall named 'x'");
  });

  it("the schema checks the body and names the field", () => {
    expect(geminiRequest.safeParse({ contents: [] }).success).toBe(false);
    const bad = geminiRequest.safeParse({ contents: [user("Hi")], generationConfig: { temperature: 3 } });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]?.path).toEqual(["generationConfig", "temperature"]);
    // Fields it does not name pass (Google's newer ones reach Google as they are).
    expect(geminiRequest.safeParse({ contents: [user("Hi")], labels: { team: "a" } }).success).toBe(true);
  });
});

describe("chat -> Gemini answers", () => {
  it("a completion: parts (thoughts, text, calls), finish reason and usage as Gemini counts it", () => {
    const answer = geminiFormat.fromChat(
      {
        id: "chatcmpl-1",
        model: "gpt-4o-mini",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Let me look.",
              reasoning_content: "Hmm.",
              tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: {
          prompt_tokens: 10,
          completion_tokens: 8,
          total_tokens: 18,
          completion_tokens_details: { reasoning_tokens: 3 },
          prompt_tokens_details: { cached_tokens: 4 },
        },
      },
      {},
      ctx,
    );
    expect(answer).toEqual({
      candidates: [
        {
          content: {
            role: "model",
            parts: [
              { text: "Hmm.", thought: true },
              { text: "Let me look." },
              { functionCall: { id: "c1", name: "f", args: { a: 1 } } },
            ],
          },
          finishReason: "STOP",
          index: 0,
        },
      ],
      usageMetadata: {
        promptTokenCount: 10,
        candidatesTokenCount: 5,
        totalTokenCount: 18,
        cachedContentTokenCount: 4,
        thoughtsTokenCount: 3,
      },
      modelVersion: "gpt-4o-mini",
      responseId: "chatcmpl-1",
    });
    expect(geminiFormat.usageOf(answer)).toMatchObject({ prompt_tokens: 10, completion_tokens: 8 });
    expect(geminiFormat.isComplete(answer)).toBe(true);
  });

  it("a stream: text as it comes, a call whole with the last chunk, usage last; folded back into the answer", () => {
    const converter = geminiFormat.streamFromChat({}, ctx);
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      id: "chatcmpl-2",
      model: "gpt-4o-mini",
      choices: [{ index: 0, delta, finish_reason: finish }],
    });
    const events = [
      ...converter.push(chunk({ role: "assistant", content: "" })),
      ...converter.push(chunk({ content: "Hel" })),
      ...converter.push(chunk({ content: "lo" })),
      ...converter.push(chunk({ tool_calls: [{ index: 0, id: "c1", function: { name: "f", arguments: '{"a"' } }] })),
      ...converter.push(chunk({ tool_calls: [{ index: 0, function: { arguments: ":1}" } }] })),
      ...converter.push(chunk({}, "tool_calls")),
      ...converter.push({
        id: "chatcmpl-2",
        choices: [],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      }),
      ...converter.end(),
    ];
    expect(events.map((event) => geminiFormat.eventTail!(event))).toEqual([undefined, undefined, "end"]);
    expect(events[0]!.candidates[0].content.parts).toEqual([{ text: "Hel" }]);
    expect(events[2]).toMatchObject({
      candidates: [
        { content: { parts: [{ functionCall: { id: "c1", name: "f", args: { a: 1 } } }] }, finishReason: "STOP" },
      ],
      usageMetadata: { promptTokenCount: 3, candidatesTokenCount: 4, totalTokenCount: 7 },
      responseId: "chatcmpl-2",
    });
    expect(geminiFormat.eventText!(events[0]!)).toBe(`data: ${JSON.stringify(events[0])}\n\n`);
    const assembler = geminiFormat.assembler();
    for (const event of events) assembler.add(event);
    expect(assembler.result().candidates[0].content.parts).toEqual([
      { text: "Hello" },
      { functionCall: { id: "c1", name: "f", args: { a: 1 } } },
    ]);
    expect(geminiFormat.isComplete(assembler.result())).toBe(true);
    expect(assembler.usage()).toMatchObject({ prompt_tokens: 3, completion_tokens: 4 });
  });

  it("a stream cut before its finish ends with Google's error object, and is no complete answer", () => {
    const converter = geminiFormat.streamFromChat({}, ctx);
    const events = [...converter.push({ choices: [{ index: 0, delta: { content: "Hi" } }] }), ...converter.end()];
    expect(events.at(-1)).toEqual({
      error: { code: 502, message: "The upstream stream ended before the answer was complete.", status: "INTERNAL" },
    });
    expect(geminiFormat.eventTail!(events.at(-1)!)).toBe("error");
    const assembler = geminiFormat.assembler();
    for (const event of events) assembler.add(event);
    expect(geminiFormat.isComplete(assembler.result())).toBe(false);
  });

  it("folding native chunks keeps a thought signature on its own part", () => {
    const assembler = geminiFormat.assembler();
    const parts = [
      [{ text: "Think", thought: true }],
      [{ text: "ing.", thought: true }],
      [{ text: "", thoughtSignature: "sig==" }],
      [{ text: "Hello " }],
      [{ text: "there." }],
    ];
    parts.forEach((chunkParts, i) => {
      assembler.add({
        candidates: [
          { content: { role: "model", parts: chunkParts }, index: 0, ...(i === 4 ? { finishReason: "STOP" } : {}) },
        ],
        modelVersion: "gemini-2.5-flash",
      });
    });
    expect(assembler.result().candidates[0]).toEqual({
      content: {
        role: "model",
        parts: [
          { text: "Thinking.", thought: true },
          { text: "", thoughtSignature: "sig==" },
          { text: "Hello there." },
        ],
      },
      index: 0,
      finishReason: "STOP",
    });
    expect(assembler.model()).toBe("gemini-2.5-flash");
  });

  it("guardrail texts: the last turn judged, thoughts left out", () => {
    const input = geminiFormat.inputTexts({
      systemInstruction: { parts: [{ text: "sys" }] },
      contents: [
        user("first"),
        { role: "model", parts: [{ text: "thought", thought: true }, { text: "answer" }] },
        user("last"),
      ],
    });
    expect(input.slots.map((slot) => slot.text)).toEqual(["sys", "first", "answer", "last"]);
    expect(input.judged).toEqual({ from: 3, to: 4 });
    expect(input.slots[3]!.path).toEqual(["contents", 2, "parts", 0, "text"]);
    const output = geminiFormat.outputTexts({
      candidates: [{ content: { parts: [{ text: "t", thought: true }, { text: "out" }] } }],
    });
    expect(output.slots).toEqual([{ path: ["candidates", 0, "content", "parts", 1, "text"], text: "out" }]);
  });
});
