import { describe, expect, it } from "vitest";
import {
  boundedChunks,
  countChatPromptTokens,
  countTokens,
  EXACT_COUNT_CHARS,
  MAX_RUN_CHARS,
} from "../../../../core/inference/catalog/tokens.ts";
import { estimateUsage } from "../../../../core/inference/gateway/usage-estimate.ts";

/** Runs `work` while a ticker measures the longest time the event loop went without turning. */
async function longestBlock(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  let running = true;
  const tick = () => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
    if (running) setImmediate(tick);
  };
  setImmediate(tick);
  await work();
  running = false;
  return longest;
}

describe("bounded token counting", () => {
  it("counts ordinary text as the encoder does (a chunk boundary costs a token at most)", async () => {
    expect(await countTokens("gpt-4o", "Hello world")).toBe(2);
    const prose = "The quick brown fox jumps over the lazy dog, twice.\n".repeat(200);
    // One encode of the whole text, for comparison (cheap on prose: its pieces are short).
    const { Tiktoken } = await import("js-tiktoken/lite");
    const ranks = await import("js-tiktoken/ranks/o200k_base");
    const exact = new Tiktoken(ranks.default).encode(prose, "all").length;
    const counted = await countTokens("gpt-4o", prose);
    expect(counted).toBeGreaterThanOrEqual(exact);
    expect(counted).toBeLessThanOrEqual(exact * 1.01);
  });

  it("never hands the encoder a run longer than the bound, and loses no character", () => {
    const text = `${"a".repeat(5000)} ${" ".repeat(300)}b${"😀".repeat(100)}\n${"x y ".repeat(1000)}`;
    const chunks = [...boundedChunks(text, text.length)];
    expect(chunks.join("")).toBe(text);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(1025);
      for (const run of chunk.match(/\S+|\s+/g) ?? []) expect(run.length).toBeLessThanOrEqual(MAX_RUN_CHARS + 1);
      expect(/^[\uDC00-\uDFFF]/.test(chunk)).toBe(false);
    }
  });

  it("does not block the event loop on a long run of one character (prompt or answer)", async () => {
    // Before: 8 KB of 'a' blocked the event loop for seconds.
    const run = "a".repeat(64 * 1024);
    let tokens = 0;
    const blocked = await longestBlock(async () => {
      tokens = await countTokens("gpt-4o", run);
    });
    expect(blocked).toBeLessThan(250); // generous: the machine is shared; before, seconds
    // 'aaaaaaaa' is one o200k token: a cut costs a token at most, so the count stays close.
    expect(tokens).toBeGreaterThan(run.length / 8 - 1);
    expect(tokens).toBeLessThan(run.length / 8 + run.length / MAX_RUN_CHARS + 2);
  });

  it("estimates past the exact budget: a 20 MB prompt is answered quickly without blocking", async () => {
    // Flat, as a string from JSON.parse is (repeat builds a tree of halves, flattened on first read).
    const huge = JSON.parse(JSON.stringify("a".repeat(20 * 1024 * 1024))) as string;
    const started = performance.now();
    let usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    const blocked = await longestBlock(async () => {
      usage = await estimateUsage(
        "chat",
        { model: "gpt-4o", messages: [{ role: "user", content: huge }] },
        { choices: [{ message: { content: huge } }] },
      );
    });
    expect(blocked).toBeLessThan(250); // generous: the machine is shared; before, seconds
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(usage.prompt_tokens).toBeGreaterThan(huge.length / 8 - 1);
    expect(usage.completion_tokens).toBeLessThan(huge.length / 4);
  });

  it("extrapolates chat prompts past the budget from their length", async () => {
    const message = "hello there ".repeat(EXACT_COUNT_CHARS / 12);
    const one = await countChatPromptTokens("gpt-4o", [{ role: "user", content: message }]);
    const four = await countChatPromptTokens(
      "gpt-4o",
      Array.from({ length: 4 }, () => ({ role: "user", content: message })),
    );
    expect(four).toBeGreaterThan(one * 3.5);
    expect(four).toBeLessThan(one * 4.5);
  });
});

describe("the encoder's first use", () => {
  it("is built without holding the event loop, and counts as the library's own encoder", async () => {
    const { vi } = await import("vitest");
    vi.resetModules();
    const fresh = await import("../../../../core/inference/catalog/tokens.ts");
    let tokens = 0;
    // Before: js-tiktoken's constructor decoded its whole rank table at once (seconds on this machine).
    const blocked = await longestBlock(async () => {
      tokens = await fresh.countTokens("gpt-4o", "Hello world, the encoder is built a slice at a time.");
    });
    expect(blocked).toBeLessThan(200);
    const { Tiktoken } = await import("js-tiktoken/lite");
    const ranks = await import("js-tiktoken/ranks/o200k_base");
    const library = new Tiktoken(ranks.default);
    expect(tokens).toBe(library.encode("Hello world, the encoder is built a slice at a time.", "all").length);
    const mixed = "naïve café 日本語 🙂 <|endoftext|> 12345 \n\t def f(x): return x**2";
    expect(await fresh.countTokens("gpt-4o", mixed)).toBe(library.encode(mixed, "all").length);
    expect(library.decode(library.encode(mixed, "all"))).toBe(mixed);
  });
});
