import { describe, expect, it } from "vitest";
import { catalogModel } from "../../../../core/inference/catalog/load.ts";
import { countChatPromptTokens } from "../../../../core/inference/catalog/tokens.ts";
import { fitToContextWindow, responsesFormat } from "../../../../core/inference/formats/responses/index.ts";
import type { TransformContext } from "../../../../core/providers/types.ts";
import { UpstreamError } from "../../../../core/providers/types.ts";

/** gpt-4 has an 8,192-token context window in the catalog: small enough to fill in a test. */
const MODEL = "gpt-4";
const ctx: TransformContext = {
  target: { provider: "openai", apiKey: "k" },
  route: "responses",
  stream: false,
  model: MODEL,
  now: 1_767_225_600,
  requestId: "req-trunc",
  includeUsage: false,
};

/** About `tokens` tokens of text (one per repeated word). */
const text = (tokens: number, word = "hello") => `${word} `.repeat(tokens);

const conversation = [
  { role: "user", content: text(3000, "alpha") },
  { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
  { type: "function_call_output", call_id: "call_1", output: text(3000, "beta") },
  { role: "assistant", content: text(3000, "gamma") },
  { role: "user", content: text(3000, "delta") },
  { role: "assistant", content: "Noted." },
  { role: "user", content: "What now?" },
];

async function prepare(body: Record<string, any>, context = ctx) {
  const full = { model: MODEL, ...body };
  return responsesFormat.prepare!(responsesFormat.toChat(full), full, context);
}

async function rejection(promise: Promise<unknown>): Promise<UpstreamError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(UpstreamError);
    return error as UpstreamError;
  }
  throw new Error("expected an UpstreamError");
}

describe("truncation (spec 7)", () => {
  it("knows the test model's window", async () => {
    expect((await catalogModel("openai", MODEL))?.contextWindow).toBe(8192);
  });

  it("sends a body that fits unchanged", async () => {
    const full = { model: MODEL, instructions: "Be brief.", input: "Hello", max_output_tokens: 1000 };
    const chat = responsesFormat.toChat(full);
    expect(await responsesFormat.prepare!(chat, full, ctx)).toBe(chat);
  });

  it("disabled (the default) and over the window: 400 context_length_exceeded on input", async () => {
    for (const truncation of [undefined, "disabled"]) {
      const error = await rejection(prepare({ input: conversation, truncation }));
      expect(error.status).toBe(400);
      expect(error.code).toBe("context_length_exceeded");
      expect(error.param).toBe("input");
      expect(error.type).toBe("invalid_request_error");
      expect(error.message).toContain("8192");
    }
  });

  it("counts max_output_tokens as reserved for the answer", async () => {
    const input = [{ role: "user", content: text(5000) }];
    await expect(prepare({ input, max_output_tokens: 2000 })).resolves.toBeTruthy();
    const error = await rejection(prepare({ input, max_output_tokens: 4000 }));
    expect(error.code).toBe("context_length_exceeded");
    expect(error.message).toContain("4000");
  });

  it("auto: drops the oldest messages, a tool call with its result, keeping the system message", async () => {
    const chat = await prepare({ instructions: "You are terse.", input: conversation, truncation: "auto" });
    expect(chat.messages.map((message: any) => [message.role, String(message.content).slice(0, 5)])).toEqual([
      ["system", "You a"],
      ["assistant", "gamma"],
      ["user", "delta"],
      ["assistant", "Noted"],
      ["user", "What "],
    ]);
    expect(await countChatPromptTokens(MODEL, chat.messages)).toBeLessThanOrEqual(8192);
  });

  it("auto: drops an assistant tool call and its result together, never a result alone", async () => {
    const input = [
      { type: "function_call", call_id: "call_1", name: "lookup", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: text(4000, "beta") },
      { role: "user", content: text(4000, "delta") },
    ];
    const chat = await prepare({ input, truncation: "auto", max_output_tokens: 500 });
    expect(chat.messages.map((message: any) => message.role)).toEqual(["user"]);
    expect(chat.messages[0].content.startsWith("delta")).toBe(true);
  });

  it("auto: still over with only the last turn left -> the 400", async () => {
    const input = [
      { role: "user", content: "Earlier question" },
      { role: "user", content: text(9000) },
    ];
    const error = await rejection(prepare({ input, truncation: "auto" }));
    expect(error.code).toBe("context_length_exceeded");
  });

  it("a model without a known window is sent unchanged", async () => {
    const unknown = { ...ctx, model: "my-private-model", target: { provider: "openai" } };
    const full = { model: "my-private-model", input: conversation };
    const chat = responsesFormat.toChat(full);
    expect(await fitToContextWindow(chat, full, unknown)).toBe(chat);
  });
});
