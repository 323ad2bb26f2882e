import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

describe("default.wordCount", () => {
  it("counts words, not punctuation or spaces, and judges the range", async () => {
    const answer = "Sure — here's the summary: revenue grew 12% in Q3, driven by new customers!";
    const result = await runCheck(
      "default.wordCount",
      { minWords: 5, maxWords: 20 },
      checkInput({ phase: "output", text: answer }),
    );
    expect(result).toEqual({
      verdict: true,
      explanation: "The text has 13 words; it must have between 5 and 20.",
      data: { count: 13, min: 5, max: 20, not: false },
    });
    const tooLong = await runCheck(
      "default.wordCount",
      { maxWords: 10 },
      checkInput({ phase: "output", text: answer }),
    );
    expect(tooLong.verdict).toBe(false);
    expect(tooLong.explanation).toBe("The text has 13 words; it must have at most 10.");
  });

  it("counts the words of a language written without spaces", async () => {
    const result = await runCheck(
      "default.wordCount",
      { minWords: 3 },
      checkInput({ text: "我想预订下周去北京的机票" }),
    );
    expect(result.data?.count).toBeGreaterThanOrEqual(4);
    expect(result.verdict).toBe(true);
  });

  it("not inverts the range", async () => {
    const result = await runCheck(
      "default.wordCount",
      { minWords: 1, maxWords: 3, not: true },
      checkInput({ text: "Thanks!" }),
    );
    expect(result.verdict).toBe(false);
  });

  it("refuses a missing or upside-down range and a malformed locale", async () => {
    expect(await problemOf("default.wordCount", {})).toEqual({
      path: "parameters",
      message: "give minWords, maxWords or both",
    });
    expect(await problemOf("default.wordCount", { minWords: 10, maxWords: 5 })).toMatchObject({ path: "parameters" });
    expect(await problemOf("default.wordCount", { minWords: 1.5 })).toMatchObject({ path: "parameters.minWords" });
    expect(await problemOf("default.wordCount", { minWords: 1, locale: "not a locale!" })).toMatchObject({
      path: "parameters.locale",
    });
  });

  it("counts 1 MB in reasonable time", async () => {
    const text = "The committee will review every application before the end of the month. ".repeat(14_000);
    const started = performance.now();
    const result = await runCheck("default.wordCount", { maxWords: 100_000 }, checkInput({ text }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.data?.count).toBe(12 * 14_000);
    expect(result.verdict).toBe(false);
  });
});
