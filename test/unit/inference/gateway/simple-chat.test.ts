import { describe, expect, it } from "vitest";
import { chatCompletionRequest } from "../../../../core/inference/gateway/schemas/chat.ts";
import { simpleChatRequest } from "../../../../core/inference/gateway/schemas/simple-chat.ts";

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number) {
  let state = seed;
  const next = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  return { next, pick };
}

/** Values for each field: the schema's edges, wrong types, and null / absent. */
const VALUES: Record<string, unknown[]> = {
  model: ["gpt-4o-mini", "", "m", 5, null],
  max_tokens: [1, 0, -1, 64, 1.5, 2 ** 53, null, "64", true],
  max_completion_tokens: [1, 0, 100, 2.5, null, "1"],
  temperature: [0, 2, 2.0001, -0.1, 0.7, null, "0.2", Number.NaN],
  top_p: [0, 1, 1.01, -1, 0.5, null, false],
  presence_penalty: [-2, 2, -2.5, 2.5, 0, null, "1"],
  frequency_penalty: [-2, 2, 3, 0.1, null],
  n: [1, 128, 129, 0, 2, 1.5, null, "2"],
  stream: [true, false, null, "true", 1],
  user: ["u", "x".repeat(512), "x".repeat(513), null, 7],
  // Fields the fast check leaves to the schema (it must then answer undefined).
  stop: ["\n", ["a"], null],
  seed: [1, null],
  stream_options: [{ include_usage: true }, null],
  tools: [[{ type: "function", function: { name: "f" } }]],
  metadata: [{ a: "b" }],
};

const MESSAGES: unknown[] = [
  { role: "user", content: "hi" },
  { role: "system", content: "be brief" },
  { role: "developer", content: "x" },
  { role: "assistant", content: "hello" },
  { role: "assistant", content: "hello", name: "bot" },
  { role: "user", content: "hi", name: "ann" },
  { role: "user", content: null },
  { role: "user", content: [{ type: "text", text: "hi" }] },
  { role: "user", content: 5 },
  { role: "user" },
  { role: "assistant" },
  { role: "tool", content: "r", tool_call_id: "c" },
  { role: "robot", content: "hi" },
  { role: "user", content: "hi", name: 3 },
  { role: "user", content: "hi", extra: true },
  "not a message",
  null,
];

function generate(rng: ReturnType<typeof random>): unknown {
  const body: Record<string, unknown> = {};
  if (rng.next() < 0.95) body.model = rng.next() < 0.8 ? "gpt-4o-mini" : rng.pick(VALUES.model!);
  if (rng.next() < 0.95) {
    const count = rng.next() < 0.1 ? 0 : 1 + Math.floor(rng.next() * 3);
    body.messages = Array.from({ length: count }, () =>
      rng.next() < 0.7 ? rng.pick(MESSAGES.slice(0, 6)) : rng.pick(MESSAGES),
    );
    if (rng.next() < 0.02) body.messages = "hi";
  }
  for (const [field, values] of Object.entries(VALUES)) {
    if (field === "model") continue;
    const rare = ["stop", "seed", "stream_options", "tools", "metadata"].includes(field);
    if (rng.next() < (rare ? 0.05 : 0.3)) body[field] = rng.pick(values);
  }
  return body;
}

describe("the hand-written check of common chat bodies", () => {
  it("accepts only bodies the schema accepts, meaning the same (20,000 generated bodies)", () => {
    const rng = random(20261123);
    let accepted = 0;
    let schemaAccepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const body = generate(rng);
      const fast = simpleChatRequest(body);
      const parsed = chatCompletionRequest.safeParse(body);
      if (parsed.success) schemaAccepted++;
      if (fast === undefined) continue;
      accepted++;
      expect(parsed.success, JSON.stringify(body)).toBe(true);
      expect(fast).toEqual(parsed.data);
    }
    // Not vacuous: most bodies the schema takes are common ones the fast check takes too.
    expect(accepted).toBeGreaterThan(1_000);
    expect(accepted / schemaAccepted).toBeGreaterThan(0.3);
  });

  it("accepts the benchmark's body and returns it as it is", () => {
    const body = {
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "You are a helpful assistant." },
        { role: "user", content: "Say hello." },
      ],
      max_tokens: 64,
      temperature: 0.2,
      stream: true,
    };
    expect(simpleChatRequest(body)).toBe(body);
  });

  it("leaves to the schema what it does not know: other fields, keys named like Object's properties", () => {
    const base = { model: "m", messages: [{ role: "user", content: "hi" }] };
    for (const body of [
      JSON.parse('{"model":"m","messages":[{"role":"user","content":"hi"}],"__proto__":{"x":1}}'),
      { ...base, constructor: 1 },
      { ...base, toString: "x" },
      { model: "m" },
      { messages: base.messages },
      [base],
      null,
      "body",
    ]) {
      expect(simpleChatRequest(body)).toBeUndefined();
    }
  });
});
