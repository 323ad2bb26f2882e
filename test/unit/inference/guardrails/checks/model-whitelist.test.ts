import { describe, expect, it } from "vitest";
import { checkInput } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const request = (model: string) => checkInput({ text: "Summarise this contract in five bullet points.", model });

describe("default.modelWhitelist", () => {
  const models = ["gpt-4o-mini", "claude-3-5-*", "@bedrock-prod/anthropic.claude-3-haiku-20240307-v1:0"];

  it("passes a model named exactly or by a prefix, in any case", async () => {
    const exact = await runCheck("default.modelWhitelist", { models }, request("gpt-4o-mini"));
    expect(exact).toEqual({
      verdict: true,
      explanation: "The request asks for 'gpt-4o-mini', which the list allows (gpt-4o-mini).",
      data: { model: "gpt-4o-mini", allowed: true, matched: "gpt-4o-mini", not: false },
    });
    expect((await runCheck("default.modelWhitelist", { models }, request("claude-3-5-sonnet-20241022"))).verdict).toBe(
      true,
    );
    expect((await runCheck("default.modelWhitelist", { models }, request("GPT-4o-mini"))).verdict).toBe(true);
    expect(
      (
        await runCheck(
          "default.modelWhitelist",
          { models },
          request("@bedrock-prod/anthropic.claude-3-haiku-20240307-v1:0"),
        )
      ).verdict,
    ).toBe(true);
  });

  it("fails a model not on the list (a longer name is not the listed one) and a request without a model", async () => {
    const other = await runCheck("default.modelWhitelist", { models }, request("gpt-4o"));
    expect(other).toMatchObject({ verdict: false, data: { allowed: false } });
    expect((await runCheck("default.modelWhitelist", { models }, request("gpt-4o-mini-2024-07-18"))).verdict).toBe(
      false,
    );
    expect((await runCheck("default.modelWhitelist", { models }, request(""))).verdict).toBe(false);
  });

  it("answers to default.allowedModels too, and not inverts", async () => {
    expect((await runCheck("default.allowedModels", { models }, request("gpt-4o"))).verdict).toBe(false);
    expect((await runCheck("default.modelWhitelist", { models, not: true }, request("gpt-4o"))).verdict).toBe(true);
  });

  it("refuses a `*` inside a name, an empty list and the output phase", async () => {
    expect(await problemOf("default.modelWhitelist", { models: ["gpt-*-mini"] })).toEqual({
      path: "parameters.models.0",
      message: "`*` may only end a model name (a prefix)",
    });
    expect(await problemOf("default.modelWhitelist", { models: [] })).toMatchObject({ path: "parameters.models" });
    expect(await problemOf("default.modelWhitelist", { models: ["gpt-4o"] }, "output")).toMatchObject({ path: "id" });
  });
});
