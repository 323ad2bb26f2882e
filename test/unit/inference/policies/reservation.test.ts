import { describe, expect, it } from "vitest";
import { costOf } from "../../../../core/inference/catalog/cost.ts";
import { DEFAULT_RESERVED_OUTPUT_TOKENS, reservationFor } from "../../../../core/inference/policies/reservation.ts";

/** The usage a request reserves against token and cost limits before its call (core/inference/policies/reservation.ts). */
describe("reservationFor", () => {
  const messages = [
    { role: "system", content: "x".repeat(40) },
    {
      role: "user",
      content: [
        { type: "text", text: "y".repeat(38) },
        { type: "image_url", image_url: { url: "data:" } },
      ],
    },
  ];

  it("reserves the prompt (characters / 4 plus framing) and max_tokens per choice", async () => {
    // 78 characters -> 20 tokens, 2 messages x 3 + 3 framing; output 100 x n=2.
    const estimate = await reservationFor("chat", { model: "gpt-4o-mini", messages, max_tokens: 100, n: 2 }, "openai");
    expect(estimate.tokens).toBe(20 + 9 + 200);
    const priced = costOf("openai", "gpt-4o-mini", { prompt_tokens: 29, completion_tokens: 200, total_tokens: 229 });
    expect(estimate.costUsd).toBeCloseTo(priced.total, 12);
    const completionTokens = await reservationFor(
      "chat",
      { model: "gpt-4o-mini", messages, max_tokens: 100, max_completion_tokens: 10 },
      "openai",
    );
    expect(completionTokens.tokens).toBe(29 + 10);
  });

  it("counts tool definitions and tool calls as prompt", async () => {
    const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }];
    const withCalls = [
      ...messages,
      { role: "assistant", content: null, tool_calls: [{ function: { name: "lookup", arguments: "{}" } }] },
    ];
    const plain = await reservationFor("chat", { model: "m", messages, max_tokens: 1 }, "openai");
    const withTools = await reservationFor("chat", { model: "m", messages: withCalls, tools, max_tokens: 1 }, "openai");
    expect(withTools.tokens - plain.tokens).toBe(Math.ceil((78 + 8 + JSON.stringify(tools).length) / 4) - 20 + 3);
  });

  it("reserves the model's output limit without max_tokens, capped", async () => {
    const small = await reservationFor("chat", { model: "gpt-4", messages: [] }, "openai"); // 8,192 in the catalog
    expect(small.tokens).toBe(3 + DEFAULT_RESERVED_OUTPUT_TOKENS);
    const unknown = await reservationFor("chat", { model: "no-such-model", messages: [] }, "openai");
    expect(unknown).toMatchObject({ tokens: 3 + DEFAULT_RESERVED_OUTPUT_TOKENS, costUsd: 0, priced: false });
    const capped = await reservationFor("chat", { model: "gpt-3.5-turbo", messages: [] }, "openai");
    expect(capped.tokens).toBeLessThanOrEqual(3 + DEFAULT_RESERVED_OUTPUT_TOKENS);
  });

  it("reserves completions (best_of choices), embeddings (no output) and nothing for other routes", async () => {
    const completion = await reservationFor(
      "completions",
      { model: "m", prompt: ["abcd", "efgh"], max_tokens: 5, n: 2, best_of: 3 },
      "openai",
    );
    expect(completion.tokens).toBe(2 + 3 + 15);
    const embedding = await reservationFor("embeddings", { model: "m", input: [[1, 2, 3], "abcdefgh"] }, "openai");
    expect(embedding.tokens).toBe(3 + 2);
    expect(await reservationFor("models", {}, "openai")).toEqual({ tokens: 0, costUsd: 0 });
  });
});
