import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import type {
  CheckDefinition,
  CheckInput,
  GuardrailActions,
  GuardrailDefinition,
} from "../../../../core/inference/guardrails/types.ts";

/**
 * The runner over checks made for the test (a redactor, a slow check, a thrower, a word spotter) next to the
 * real regex check: stages, timeouts, on_error, async, feedback and denial.
 */

const redactor: CheckDefinition<{ word: string }> = {
  id: "test.redact",
  description: "replaces a word",
  parameters: z.object({ word: z.string() }),
  rewrites: () => true,
  run: (input, { word }) => ({
    verdict: true,
    explanation: "redacted",
    transformedParts: input.parts.map((part) => part.replaceAll(word, "[X]")),
  }),
};
const slow: CheckDefinition<{ ms: number }> = {
  id: "test.slow",
  description: "waits",
  parameters: z.object({ ms: z.number() }),
  run: (_input, { ms }) =>
    new Promise((resolve) => setTimeout(() => resolve({ verdict: true, explanation: "slow" }), ms)),
};
const thrower: CheckDefinition = {
  id: "test.throw",
  description: "throws",
  parameters: z.object({}),
  run: () => {
    throw new Error("boom");
  },
};
const spotter: CheckDefinition<{ word: string }> = {
  id: "test.absent",
  description: "passes when the word is absent from the judged text",
  parameters: z.object({ word: z.string() }),
  // Declares no rewrite: its transformedParts must be ignored.
  run: (input, { word }) => ({
    verdict: !input.text.includes(word),
    explanation: "spotted",
    transformedParts: input.parts.map(() => "ignored"),
  }),
};

vi.mock("../../../../core/inference/guardrails/checks/registry.ts", async (original) => {
  const real = await original<typeof import("../../../../core/inference/guardrails/checks/registry.ts")>();
  const extra = new Map<string, CheckDefinition>([redactor, slow, thrower, spotter].map((check) => [check.id, check]));
  return { ...real, findCheck: (id: string) => extra.get(id) ?? real.findCheck(id) };
});

const { runGuardrails } = await import("../../../../core/inference/guardrails/runner.ts");

const actions = (overrides: Partial<GuardrailActions> = {}): GuardrailActions => ({
  deny: true,
  async: false,
  soft_deny_200: false,
  on_error: "open",
  timeout_ms: 1_000,
  ...overrides,
});

const guardrail = (id: string, checks: GuardrailDefinition["checks"], overrides?: Partial<GuardrailActions>) => ({
  id,
  checks,
  actions: actions(overrides),
});

const input = (parts: string[]): Omit<CheckInput, "signal"> => ({
  phase: "input",
  route: "chat",
  text: parts.at(-1)!,
  parts,
  request: {},
  model: "gpt-4o-mini",
  metadata: {},
  headers: new Headers(),
  env: {} as CheckInput["env"],
});

const options = () => {
  const pending: Promise<unknown>[] = [];
  return { signal: new AbortController().signal, waitUntil: (work: Promise<unknown>) => pending.push(work), pending };
};

describe("runGuardrails", () => {
  it("passes, fails and denies by the guardrails' verdicts, with check verdicts in written order", async () => {
    const run = await runGuardrails(
      [
        guardrail("ok", [{ id: "default.regexMatch", parameters: { rule: "hello" } }], { deny: false }),
        guardrail("bad", [
          { id: "test.absent", parameters: { word: "secret" } },
          { id: "default.regexMatch", parameters: { rule: "^hello" } },
        ]),
      ],
      input(["system text", "hello, the secret is out"]),
      options(),
    );
    expect(run.verdicts.map((verdict) => [verdict.id, verdict.verdict])).toEqual([
      ["ok", true],
      ["bad", false],
    ]);
    expect(run.verdicts[1]!.checks.map((check) => [check.id, check.verdict])).toEqual([
      ["test.absent", false],
      ["default.regexMatch", true],
    ]);
    expect(run.denied?.id).toBe("bad");
    expect(run.transformedParts).toBeUndefined();
  });

  it("runs rewriting checks first, in order, and judges the rest on the rewrite", async () => {
    const run = await runGuardrails(
      [
        guardrail("spot", [{ id: "test.absent", parameters: { word: "alice" } }]),
        guardrail("redact", [
          { id: "test.redact", parameters: { word: "alice" } },
          { id: "test.redact", parameters: { word: "bob" } },
        ]),
      ],
      input(["bob wrote", "to alice and bob"]),
      options(),
    );
    expect(run.transformedParts).toEqual(["[X] wrote", "to [X] and [X]"]);
    expect(run.denied).toBeUndefined();
    expect(run.verdicts[1]!.transformed).toBe(true);
  });

  it("bounds a check by timeout_ms and follows on_error", async () => {
    const startedAt = performance.now();
    const run = await runGuardrails(
      [
        guardrail("open", [{ id: "test.slow", parameters: { ms: 5_000 } }], { timeout_ms: 50 }),
        guardrail("closed", [{ id: "test.throw", parameters: {} }], { on_error: "closed" }),
        guardrail("unknown", [{ id: "nope.missing", parameters: {} }], { on_error: "closed", deny: false }),
      ],
      input(["x"]),
      options(),
    );
    expect(performance.now() - startedAt).toBeLessThan(1_000);
    const [open, closed, unknown] = run.verdicts;
    expect(open!.verdict).toBe(true);
    expect(open!.checks[0]!.error).toMatch(/timed out after 50 ms/);
    expect(closed!.verdict).toBe(false);
    expect(closed!.checks[0]!.error).toBe("boom");
    expect(unknown!.checks[0]!.error).toMatch(/unknown check/);
    expect(run.denied?.id).toBe("closed");
  });

  it("hands async guardrails to waitUntil and reports their verdicts without holding the request", async () => {
    const seen: string[] = [];
    const opts = options();
    const run = await runGuardrails(
      [
        guardrail(
          "later",
          [
            { id: "test.slow", parameters: { ms: 30 } },
            { id: "test.throw", parameters: {} },
          ],
          { async: true, on_error: "closed", deny: false },
        ),
      ],
      input(["x"]),
      { ...opts, onAsyncVerdict: (verdict) => seen.push(`${verdict.id}:${verdict.verdict}:${verdict.async}`) },
    );
    expect(run.verdicts).toEqual([]);
    expect(seen).toEqual([]);
    await Promise.all(opts.pending);
    expect(seen).toEqual(["later:false:true"]);
  });

  it("writes the feedback of the outcome and skips disabled checks", async () => {
    const feedback = {
      on_success: { feedback: { value: 5, weight: 1 } },
      on_fail: { feedback: { value: -5, weight: 1 } },
    };
    const run = await runGuardrails(
      [
        guardrail(
          "fb",
          [
            { id: "default.regexMatch", parameters: { rule: "x" } },
            { id: "test.throw", parameters: {}, is_enabled: false },
          ],
          { ...feedback, on_error: "closed" },
        ),
      ],
      input(["x"]),
      options(),
    );
    expect(run.verdicts[0]!.verdict).toBe(true);
    expect(run.verdicts[0]!.checks).toHaveLength(1);
    expect(run.verdicts[0]!.feedback).toEqual({ value: 5, weight: 1 });
  });
});
