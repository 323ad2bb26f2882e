import { describe, expect, it } from "vitest";
import { moderation } from "../../../../../core/inference/guardrails/checks/moderation.ts";
import { checkSpecProblem, findCheck } from "../../../../../core/inference/guardrails/checks/registry.ts";
import type { CheckEnvironment, CheckInput, CheckSpec } from "../../../../../core/inference/guardrails/types.ts";

interface InferCall {
  route: string;
  body: Record<string, unknown>;
  config: string | Record<string, unknown>;
  signal: AbortSignal;
}

/** An environment whose pipeline answers `answer` and records what it was asked. */
function fakeEnv(answer: { status: number; json: unknown }) {
  const calls: InferCall[] = [];
  const env: CheckEnvironment = {
    postJson: () => Promise.reject(new Error("not used")),
    getJson: () => Promise.reject(new Error("not used")),
    async infer(route, body, config, signal) {
      calls.push({ route, body, config, signal });
      return answer;
    },
  };
  return { env, calls };
}

function chatInput(text: string, env: CheckEnvironment): CheckInput {
  return {
    phase: "input",
    route: "chat",
    text,
    parts: ["Be helpful.", text],
    request: { model: "gpt-4o", messages: [{ role: "user", content: text }] },
    model: "gpt-4o",
    metadata: {},
    headers: new Headers({ authorization: "Bearer sk-caller" }),
    signal: new AbortController().signal,
    env,
  };
}

/** An OpenAI moderation answer (omni-moderation-latest) with the given scores; flags at 0.5 as OpenAI roughly does. */
function moderationAnswer(scores: Record<string, number>) {
  const all = {
    harassment: 0.0001,
    "harassment/threatening": 0.0001,
    hate: 0.0001,
    "hate/threatening": 0.0001,
    illicit: 0.0001,
    "illicit/violent": 0.0001,
    "self-harm": 0.0001,
    "self-harm/intent": 0.0001,
    "self-harm/instructions": 0.0001,
    sexual: 0.0001,
    "sexual/minors": 0.0001,
    violence: 0.0001,
    "violence/graphic": 0.0001,
    ...scores,
  };
  const categories = Object.fromEntries(Object.entries(all).map(([name, score]) => [name, score >= 0.5]));
  return {
    status: 200,
    json: {
      id: "modr-970d409ef3bef3b70c73d8232df86e7d",
      model: "omni-moderation-latest",
      results: [
        {
          flagged: Object.values(categories).some(Boolean),
          categories,
          category_scores: all,
          category_applied_input_types: Object.fromEntries(Object.keys(all).map((name) => [name, ["text"]])),
        },
      ],
    },
  };
}

async function parsed(parameters: Record<string, unknown>) {
  const spec: CheckSpec = { id: "default.moderation", parameters };
  expect(await checkSpecProblem(spec)).toBeUndefined();
  return spec.parameters as never;
}

const THREAT = "I know where you live and I will hurt you tonight.";

describe("default.moderation", () => {
  it("is registered under its id and Portkey's", async () => {
    expect(await findCheck("default.moderation")).toBe(moderation);
    expect(await findCheck("portkey.moderateContent")).toBe(moderation);
  });

  it("sends the text to /moderations through the config, and fails when the answer is flagged", async () => {
    const { env, calls } = fakeEnv(moderationAnswer({ violence: 0.91, "harassment/threatening": 0.72 }));
    const input = chatInput(THREAT, env);
    const result = await moderation.run(input, await parsed({ config: "pc-moderation" }));

    expect(calls).toEqual([
      {
        route: "moderations",
        body: { model: "omni-moderation-latest", input: THREAT },
        config: "pc-moderation",
        signal: input.signal,
      },
    ]);
    expect(result).toEqual({
      verdict: false,
      explanation: "The moderation model flagged the text: harassment/threatening, violence.",
      data: {
        flagged_categories: ["harassment/threatening", "violence"],
        model: "omni-moderation-latest",
        scores: { "harassment/threatening": 0.72, violence: 0.91 },
      },
    });
  });

  it("passes a text the answer does not flag", async () => {
    const { env } = fakeEnv(moderationAnswer({}));
    const inline = { provider: "openai", api_key: "sk-moderation-key" };
    const result = await moderation.run(
      chatInput("What's a good recipe for banana bread?", env),
      await parsed({ config: inline, model: "text-moderation-latest" }),
    );
    expect(result).toEqual({
      verdict: true,
      explanation: "The moderation model flagged none of the restricted categories.",
      data: { flagged_categories: [], model: "text-moderation-latest", scores: {} },
    });
  });

  it("with categories, fails only on those", async () => {
    const { env } = fakeEnv(moderationAnswer({ violence: 0.91 }));
    const selfHarmOnly = await parsed({ config: "pc-moderation", categories: ["self-harm", "self-harm/intent"] });
    const passing = await moderation.run(chatInput(THREAT, env), selfHarmOnly);
    expect(passing.verdict).toBe(true);
    expect(passing.data).toMatchObject({ flagged_categories: [], scores: { "self-harm": 0.0001 } });

    const violence = await parsed({ config: "pc-moderation", categories: ["violence", "hate"] });
    const failing = await moderation.run(chatInput(THREAT, env), violence);
    expect(failing.verdict).toBe(false);
    expect(failing.data).toMatchObject({ flagged_categories: ["violence"], scores: { violence: 0.91, hate: 0.0001 } });
  });

  it("with a threshold, judges by the scores instead of the model's flags", async () => {
    const { env } = fakeEnv(moderationAnswer({ violence: 0.3 }));
    const strict = await moderation.run(chatInput(THREAT, env), await parsed({ config: "pc-m", threshold: 0.25 }));
    expect(strict.verdict).toBe(false);
    expect(strict.data).toMatchObject({ flagged_categories: ["violence"] });

    const loose = fakeEnv(moderationAnswer({ violence: 0.6 }));
    const result = await moderation.run(chatInput(THREAT, loose.env), await parsed({ config: "pc-m", threshold: 0.8 }));
    expect(result.verdict).toBe(true);
  });

  it("does not call anything for an empty text", async () => {
    const { env, calls } = fakeEnv(moderationAnswer({}));
    const result = await moderation.run(chatInput("   ", env), await parsed({ config: "pc-m" }));
    expect(result.verdict).toBe(true);
    expect(calls).toHaveLength(0);
  });

  describe("errors", () => {
    const cases: Array<[string, { status: number; json: unknown }, string]> = [
      [
        "a refused call",
        { status: 401, json: { error: { message: "Incorrect API key provided: sk-mod***", code: "invalid_api_key" } } },
        "the moderations call answered HTTP 401 (invalid_api_key)",
      ],
      ["an upstream failure", { status: 502, json: undefined }, "the moderations call answered HTTP 502"],
      ["no results", { status: 200, json: { results: [] } }, "the moderation answer has no results[0]"],
      [
        "a malformed result",
        { status: 200, json: { results: [{ flagged: "yes", categories: {} }] } },
        "the moderation answer has no results[0]",
      ],
    ];
    for (const [what, answer, message] of cases) {
      it(`is an error on ${what}`, async () => {
        const { env } = fakeEnv(answer);
        await expect(moderation.run(chatInput(THREAT, env), await parsed({ config: "pc-m" }))).rejects.toThrow(message);
      });
    }

    it("never repeats the provider's message (it may quote a key)", async () => {
      const { env } = fakeEnv(cases[0]![1]);
      await expect(moderation.run(chatInput(THREAT, env), await parsed({ config: "pc-m" }))).rejects.not.toThrow(
        /sk-mod/,
      );
    });

    it("needs category_scores for a threshold", async () => {
      const answer = moderationAnswer({});
      delete (answer.json.results[0] as Record<string, unknown>).category_scores;
      const { env } = fakeEnv(answer);
      await expect(
        moderation.run(chatInput(THREAT, env), await parsed({ config: "pc-m", threshold: 0.5 })),
      ).rejects.toThrow("the moderation answer has no category_scores to compare with the threshold");
    });
  });

  describe("parameters", () => {
    const refused: Array<[Record<string, unknown>, string, string]> = [
      [{}, "parameters.config", "expected a saved config's id or slug, or an inline routing config object"],
      [{ config: 42 }, "parameters.config", "expected a saved config's id or slug, or an inline routing config object"],
      [
        { config: "has spaces" },
        "parameters.config",
        "expected a saved config's id or slug, or an inline routing config object",
      ],
      [{ config: {} }, "parameters.config", "the config is empty"],
      [
        { config: "pc-m", categories: ["violance"] },
        "parameters.categories.0",
        "expected one of hate, hate/threatening, harassment, harassment/threatening, self-harm, self-harm/intent, " +
          "self-harm/instructions, sexual, sexual/minors, violence, violence/graphic, illicit, illicit/violent",
      ],
      [{ config: "pc-m", threshold: 1.5 }, "parameters.threshold", "Too big: expected number to be <=1"],
      [{ config: "pc-m", model: "" }, "parameters.model", "Too small: expected string to have >=1 characters"],
    ];
    for (const [parameters, path, message] of refused) {
      it(`refuse ${JSON.stringify(parameters)}`, async () => {
        expect(await checkSpecProblem({ id: "default.moderation", parameters })).toEqual({ path, message });
      });
    }
  });
});
