import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const answer = (text: string) => checkInput({ phase: "output", text });

describe("default.jsonKeys", () => {
  const extraction =
    '```json\n{"name": "Ada Lovelace", "email": "ada@example.com", "company": "Analytical Engines"}\n```';

  it("all: passes when every key is a top-level key", async () => {
    const result = await runCheck("default.jsonKeys", { keys: ["name", "email"], operator: "all" }, answer(extraction));
    expect(result).toEqual({
      verdict: true,
      explanation: "Passed: 2 of the 2 keys are present, and all must be.",
      data: { operator: "all", json_found: true, present_keys: ["name", "email"], missing_keys: [] },
    });
    expect(JSON.stringify(result)).not.toContain("ada@example.com");
  });

  it("any (default) and none", async () => {
    const any = await runCheck("default.jsonKeys", { keys: ["phone", "company"] }, answer(extraction));
    expect(any.verdict).toBe(true);
    const none = await runCheck("default.jsonKeys", { keys: ["email", "ssn"], operator: "none" }, answer(extraction));
    expect(none).toMatchObject({ verdict: false, data: { present_keys: ["email"], missing_keys: ["ssn"] } });
  });

  it("looks at top-level keys only, and at the block that passes when there are several", async () => {
    const nested = '{"user": {"email": "x@example.com"}}';
    expect((await runCheck("default.jsonKeys", { keys: ["email"] }, answer(nested))).verdict).toBe(false);
    const two = 'First try:\n```json\n{"draft": true}\n```\nFinal:\n```json\n{"title": "Q3", "body": "..."}\n```';
    const result = await runCheck("default.jsonKeys", { keys: ["title", "body"], operator: "all" }, answer(two));
    expect(result.verdict).toBe(true);
  });

  it("fails a text without a JSON object", async () => {
    const result = await runCheck(
      "default.jsonKeys",
      { keys: ["name"] },
      answer("Her name is Ada and she works at a bank."),
    );
    expect(result).toEqual({
      verdict: false,
      explanation: "The text carries no JSON object.",
      data: { operator: "any", json_found: false },
    });
    expect((await runCheck("default.jsonKeys", { keys: ["name"] }, answer('["name"]'))).verdict).toBe(false);
  });

  it("refuses an empty key list and an unknown operator", async () => {
    expect(await problemOf("default.jsonKeys", { keys: [] })).toMatchObject({ path: "parameters.keys" });
    expect(await problemOf("default.jsonKeys", { keys: ["a"], operator: "most" })).toMatchObject({
      path: "parameters.operator",
    });
  });

  it("reads 1 MB of JSON in reasonable time", async () => {
    const text = JSON.stringify({
      items: Array.from({ length: 20_000 }, (_, i) => ({ id: i, label: `item ${i}` })),
      total: 20_000,
    });
    const started = performance.now();
    const result = await runCheck(
      "default.jsonKeys",
      { keys: ["items", "total"], operator: "all" },
      answer(`Result:\n${text}`),
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.verdict).toBe(true);
  });
});
