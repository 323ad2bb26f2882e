import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

describe("default.sentenceCount", () => {
  it("counts sentences as a reader does", async () => {
    const answer = "Your order shipped today. It should arrive by Friday! Do you need anything else?";
    const result = await runCheck(
      "default.sentenceCount",
      { minSentences: 1, maxSentences: 3 },
      checkInput({ phase: "output", text: answer }),
    );
    expect(result.verdict).toBe(true);
    expect(result.data?.count).toBe(3);
    const one = await runCheck(
      "default.sentenceCount",
      { maxSentences: 1 },
      checkInput({ phase: "output", text: answer }),
    );
    expect(one.verdict).toBe(false);
    expect(one.explanation).toBe("The text has 3 sentences; it must have at most 1.");
  });

  it("ends sentences at CJK full stops and ignores segments without words", async () => {
    const result = await runCheck(
      "default.sentenceCount",
      { minSentences: 2 },
      checkInput({ text: "今天天气很好。我们去公园吧！ ... " }),
    );
    expect(result.data?.count).toBe(2);
  });

  it("not inverts; a range is required", async () => {
    const result = await runCheck(
      "default.sentenceCount",
      { minSentences: 2, not: true },
      checkInput({ text: "One. Two. Three." }),
    );
    expect(result.verdict).toBe(false);
    expect(await problemOf("default.sentenceCount", { not: true })).toMatchObject({ path: "parameters" });
  });

  it("counts 1 MB in reasonable time", async () => {
    const text = "Mix the flour and the butter. Add the eggs one at a time. ".repeat(18_000);
    const started = performance.now();
    const result = await runCheck("default.sentenceCount", { minSentences: 1 }, checkInput({ text }));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.data?.count).toBe(36_000);
  });
});
