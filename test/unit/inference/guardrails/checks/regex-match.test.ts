import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

describe("default.regexMatch", () => {
  it("passes when the answer matches, and says where without quoting it", async () => {
    const answer = "Your order #A-20931 ships on Tuesday. Tracking: 1Z999AA10123456784.";
    const result = await runCheck(
      "default.regexMatch",
      { rule: "1Z[0-9A-Z]{16}" },
      checkInput({ phase: "output", text: answer }),
    );
    expect(result.verdict).toBe(true);
    expect(result.data).toEqual({ match_start: answer.indexOf("1Z"), match_length: 18 });
    expect(JSON.stringify(result)).not.toContain("1Z999AA10123456784");
  });

  it("with not, fails a prompt that carries what the pattern catches", async () => {
    const prompt = "Here is my key sk-proj-8fJ2kLq9xVb3mN7pRt5wYz1cD4eF6gH0, why does it not work?";
    const rule = "sk-[A-Za-z0-9_-]{20,}";
    const caught = await runCheck("default.regexMatch", { rule, not: true }, checkInput({ text: prompt }));
    expect(caught.verdict).toBe(false);
    expect(caught.explanation).toBe("The text matches the pattern, which it must not.");
    expect(JSON.stringify(caught)).not.toContain("sk-proj");
    const clean = await runCheck(
      "default.regexMatch",
      { rule, not: true },
      checkInput({ text: "Why does my API key not work?" }),
    );
    expect(clean.verdict).toBe(true);
  });

  it("refuses look-around and back-references when the guardrail is saved", async () => {
    expect(await problemOf("default.regexMatch", { rule: "password(?=:)" })).toMatchObject({
      path: "parameters",
      message: expect.stringContaining("RE2 syntax"),
    });
    expect(await problemOf("default.regexMatch", { rule: String.raw`(\w+) \1` })).toMatchObject({ path: "parameters" });
    expect(await problemOf("default.regexMatch", { rule: "(unclosed" })).toMatchObject({ path: "parameters" });
    expect(await problemOf("default.regexMatch", { rule: "" })).toMatchObject({ path: "parameters.rule" });
  });

  it("runs a catastrophic pattern on 100 KB in linear time", async () => {
    const text = `${"a".repeat(100_000)}!`;
    const started = performance.now();
    const result = await runCheck("default.regexMatch", { rule: "(a+)+$" }, checkInput({ text }));
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(result.verdict).toBe(false);
  });

  it("scans 1 MB of chat in reasonable time", async () => {
    const text = "Please summarise the meeting notes from Tuesday and list the action items. ".repeat(14_000);
    const started = performance.now();
    const result = await runCheck(
      "default.regexMatch",
      { rule: String.raw`\b\d{3}-\d{2}-\d{4}\b` },
      checkInput({ text }),
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.verdict).toBe(false);
  });
});
