import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const prompt =
  "Hi! I was charged twice for my subscription last month. Can I get a refund, or should I file a chargeback with my bank?";

describe("default.contains", () => {
  it("any (default): passes when one word is there, in any case, and names the words found", async () => {
    const result = await runCheck(
      "default.contains",
      { words: ["Refund", "cancel", "lawyer"] },
      checkInput({ text: prompt }),
    );
    expect(result.verdict).toBe(true);
    expect(result.data).toEqual({ operator: "any", found_words: ["Refund"], missing_words: ["cancel", "lawyer"] });
    expect(result.explanation).toBe("Passed: 1 of the 3 words is present, and at least one must be.");
    expect(JSON.stringify(result)).not.toContain("charged twice");
  });

  it("matches whole words by default, substrings on request", async () => {
    const text = "The concatenated report is in the scatter plot appendix.";
    const whole = await runCheck("default.contains", { words: ["cat", "port"] }, checkInput({ text }));
    expect(whole.verdict).toBe(false);
    const parts = await runCheck(
      "default.contains",
      { words: ["cat", "port"], wholeWords: false },
      checkInput({ text }),
    );
    expect(parts.verdict).toBe(true);
    expect(parts.data?.found_words).toEqual(["cat", "port"]);
  });

  it("matches phrases across spacing and punctuation inside words, not across punctuation between words", async () => {
    const answer = "Never share your credit   card number or your e-mail password with anyone.";
    const result = await runCheck(
      "default.contains",
      { words: ["credit card", "e-mail", "email", "card number, or"], operator: "all" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(result.verdict).toBe(false);
    expect(result.data?.found_words).toEqual(["credit card", "e-mail"]);
    expect(result.data?.missing_words).toEqual(["email", "card number, or"]);
  });

  it("all and none", async () => {
    const answer = "To reset your password, open Settings, choose Security and click Reset.";
    const all = await runCheck(
      "default.contains",
      { words: ["settings", "security"], operator: "all" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(all.verdict).toBe(true);
    const none = await runCheck(
      "default.contains",
      { words: ["password", "ssn"], operator: "none" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(none.verdict).toBe(false);
    expect(none.explanation).toBe("Failed: 1 of the 2 words is present, and none may be.");
    const clean = await runCheck(
      "default.contains",
      { words: ["ssn", "social security number"], operator: "none" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(clean.verdict).toBe(true);
  });

  it("case-sensitive when asked", async () => {
    const text = "Apple released a new phone; I ate an apple.";
    const result = await runCheck("default.contains", { words: ["APPLE"], caseSensitive: true }, checkInput({ text }));
    expect(result.verdict).toBe(false);
  });

  it("finds words of scripts written without spaces", async () => {
    const text = "我想预订下周去北京的机票。";
    const result = await runCheck("default.contains", { words: ["北京", "上海"] }, checkInput({ text }));
    expect(result.data?.found_words).toEqual(["北京"]);
  });

  it("refuses empty lists, blank words and more than 500 words", async () => {
    expect(await problemOf("default.contains", { words: [] })).toMatchObject({ path: "parameters.words" });
    expect(await problemOf("default.contains", { words: ["  "] })).toMatchObject({ path: "parameters.words.0" });
    expect(
      await problemOf("default.contains", { words: Array.from({ length: 501 }, (_, i) => `w${i}`) }),
    ).toMatchObject({
      path: "parameters.words",
    });
  });

  it("looks for 500 words and phrases in 1 MB in reasonable time", async () => {
    const text = "We shipped the quarterly update to every customer in the northern region on time. ".repeat(12_500);
    const words = Array.from({ length: 500 }, (_, i) => (i % 2 ? `term${i}` : `northern region ${i}`));
    words.push("quarterly update");
    for (const wholeWords of [true, false]) {
      const started = performance.now();
      const result = await runCheck("default.contains", { words: words.slice(-500), wholeWords }, checkInput({ text }));
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(result.data?.found_words).toEqual(["quarterly update"]);
    }
  });
});
