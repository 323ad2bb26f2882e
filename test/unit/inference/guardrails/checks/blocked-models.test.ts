import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const request = (model: string) => checkInput({ text: "Write a limerick about a cat.", model });

describe("default.blockedModels", () => {
  const models = ["o1-pro", "gpt-4.5-*"];

  it("fails a blocked model, named exactly or by a prefix, in any case", async () => {
    expect(await runCheck("default.blockedModels", { models }, request("o1-pro"))).toEqual({
      verdict: false,
      explanation: "The request asks for 'o1-pro', which is blocked (o1-pro).",
      data: { model: "o1-pro", blocked: true, matched: "o1-pro" },
    });
    expect((await runCheck("default.blockedModels", { models }, request("GPT-4.5-preview-2025-02-27"))).verdict).toBe(
      false,
    );
  });

  it("passes other models and a request without a model", async () => {
    expect((await runCheck("default.blockedModels", { models }, request("o1"))).verdict).toBe(true);
    expect((await runCheck("default.blockedModels", { models }, request("gpt-4o-mini"))).verdict).toBe(true);
    expect(await runCheck("default.blockedModels", { models }, request(""))).toMatchObject({
      verdict: true,
      explanation: "The request names no model.",
    });
  });

  it("takes `*` only at the end: `*-preview` is refused when saved", async () => {
    expect(await problemOf("default.blockedModels", { models: [...models, "*-preview"] })).toMatchObject({
      path: "parameters.models.2",
    });
    expect(await problemOf("default.blockedModels", { models: ["*"] })).toBeUndefined();
  });
});
