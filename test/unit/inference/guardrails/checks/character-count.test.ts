import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

describe("default.characterCount", () => {
  it("counts characters of plain text", async () => {
    const result = await runCheck(
      "default.characterCount",
      { minCharacters: 1, maxCharacters: 280 },
      checkInput({ text: "Write a tweet announcing our spring sale." }),
    );
    expect(result).toMatchObject({ verdict: true, data: { count: 41 } });
  });

  it("counts what a reader sees as one character (emoji, accents), not UTF-16 units", async () => {
    const text = "Café 👍🏽 👨‍👩‍👧"; // 4 + space + thumbs up with skin tone + space + family
    const result = await runCheck("default.characterCount", { maxCharacters: 7 }, checkInput({ text }));
    expect(text.length).toBeGreaterThan(7);
    expect(result.data?.count).toBe(8);
    expect(result.verdict).toBe(false);
    expect(result.explanation).toBe("The text has 8 characters; it must have at most 7.");
  });

  it("not inverts; bounds are whole, non-negative and in order", async () => {
    const result = await runCheck(
      "default.characterCount",
      { maxCharacters: 10, not: true },
      checkInput({ text: "Hello" }),
    );
    expect(result.verdict).toBe(false);
    expect(await problemOf("default.characterCount", { minCharacters: -1 })).toMatchObject({
      path: "parameters.minCharacters",
    });
    expect(await problemOf("default.characterCount", { minCharacters: 9, maxCharacters: 3 })).toEqual({
      path: "parameters",
      message: "minCharacters (9) is above maxCharacters (3)",
    });
  });

  it("counts 1 MB of accented text in reasonable time", async () => {
    const text = "Déjà vu: le café crème coûte 3 € à Paris. ".repeat(25_000);
    const started = performance.now();
    const result = await runCheck("default.characterCount", { maxCharacters: 2_000_000 }, checkInput({ text }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.data?.count).toBe(text.length);
  });
});
