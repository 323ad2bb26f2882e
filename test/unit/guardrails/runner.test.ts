import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { GuardrailBudget, INLINE_MAX_CHARS, TURN_MS } from "../../../core/guardrails/budget.ts";
import type {
  CheckDefinition,
  CheckInput,
  CheckThreads,
  GuardrailActions,
  GuardrailDefinition,
} from "../../../core/guardrails/types.ts";

/**
 * The runner over checks made for the test (a redactor, a slow check, a thrower, a word spotter, a busy one, a
 * header reader) next to real checks: stages, timeouts, on_error, async, feedback and denial; and its bounds on
 * guardrail CPU (core/guardrails/budget.ts): what each check costs the request's budget, where it runs (on the
 * event loop, or on the platform's threads for a long text), what a check over the budget answers, and the turns
 * the event loop gets between checks judged on it.
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

/** Busy for `ms` on the event loop, then passes: a synchronous check of middling cost. */
const busy: CheckDefinition<{ ms: number }> = {
  id: "test.busy",
  description: "spins",
  parameters: z.object({ ms: z.number() }),
  cost: () => 1,
  run: (_input, { ms }) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
    return { verdict: true, explanation: "done" };
  },
};
/** Needs the request's headers: never sent to a thread, however long the text. */
const headerReader: CheckDefinition = {
  id: "test.headers",
  description: "reads a header",
  parameters: z.object({}),
  run: (input) => ({ verdict: !input.headers.has("x-denied"), explanation: "read" }),
};

vi.mock("../../../core/guardrails/checks/registry.ts", async (original) => {
  const real = await original<typeof import("../../../core/guardrails/checks/registry.ts")>();
  const extra = new Map<string, CheckDefinition>(
    [redactor, slow, thrower, spotter, busy, headerReader].map((check) => [check.id, check]),
  );
  return { ...real, findCheck: (id: string) => extra.get(id) ?? real.findCheck(id) };
});

const { runGuardrails } = await import("../../../core/guardrails/runner.ts");
const { findCheck } = await import("../../../core/guardrails/checks/registry.ts");

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

/** Threads that judge in this thread (with the real check) and note which checks they were given. */
function recordingThreads(): CheckThreads & { sent: string[] } {
  const sent: string[] = [];
  return {
    sent,
    async run(check) {
      sent.push(check.id);
      const definition = (await findCheck(check.id))!;
      return definition.run({ ...input([""]), ...check.input, signal: new AbortController().signal }, check.parameters);
    },
  };
}

const LONG = "word ".repeat(INLINE_MAX_CHARS / 4); // 80 Ki characters: over the inline limit
const wordCount = (maxWords: number) => ({ id: "default.wordCount", parameters: { maxWords } });

describe("where a check runs", () => {
  it("a short text: on the event loop, the threads untouched", async () => {
    const threads = recordingThreads();
    const run = await runGuardrails([guardrail("g", [wordCount(10)])], input(["a few words"]), {
      ...options(),
      threads,
    });
    expect(run.verdicts[0]!.verdict).toBe(true);
    expect(threads.sent).toEqual([]);
  });

  it("a long text: self-contained checks on the threads, the others on the event loop", async () => {
    const threads = recordingThreads();
    const run = await runGuardrails(
      [
        guardrail("g", [
          wordCount(100_000),
          { id: "default.regexMatch", parameters: { rule: "^(word )+$" } },
          { id: "test.headers", parameters: {} },
          // Reads only the model: costs nothing, never worth a thread.
          { id: "default.modelWhitelist", parameters: { models: ["gpt-4o-mini"] } },
        ]),
      ],
      input(["system prompt", LONG]),
      { ...options(), threads },
    );
    expect(threads.sent).toEqual(["default.wordCount", "default.regexMatch"]);
    expect(run.verdicts[0]!.checks.map((check) => [check.id, check.verdict, check.error])).toEqual([
      ["default.wordCount", true, undefined],
      ["default.regexMatch", true, undefined],
      ["test.headers", true, undefined],
      ["default.modelWhitelist", true, undefined],
    ]);
    expect(run.verdicts[0]!.checks[0]!.data).toMatchObject({ count: INLINE_MAX_CHARS / 4 });
  });

  it("a long text without threads (a platform with none): on the event loop, the same verdict", async () => {
    const run = await runGuardrails([guardrail("g", [wordCount(10)])], input(["system prompt", LONG]), options());
    expect(run.verdicts[0]!.checks[0]).toMatchObject({ verdict: false, data: { count: INLINE_MAX_CHARS / 4 } });
    expect(run.denied?.id).toBe("g");
  });

  it("PII reads every part: a long system prompt sends it to a thread, and its redaction comes back", async () => {
    const threads = recordingThreads();
    const text = "Write to jane.doe@example.com";
    const run = await runGuardrails(
      [guardrail("pii", [{ id: "default.pii", parameters: { redact: true } }])],
      input([LONG, text]),
      { ...options(), threads },
    );
    expect(threads.sent).toEqual(["default.pii"]);
    expect(run.transformedParts).toEqual([LONG, "Write to [EMAIL_ADDRESS]"]);
  });
});

describe("the budget", () => {
  it("pays for checks in the order written; one it cannot pay for follows on_error", async () => {
    const budget = new GuardrailBudget(LONG.length * 2 + 10);
    const run = await runGuardrails(
      [
        guardrail("first", [wordCount(100_000), wordCount(100_001)]),
        guardrail("open", [wordCount(100_002)]),
        guardrail("closed", [wordCount(100_003)], { on_error: "closed" }),
      ],
      input(["system prompt", LONG]),
      { ...options(), budget },
    );
    const [first, open, closed] = run.verdicts;
    expect(first!.checks.map((check) => check.error)).toEqual([undefined, undefined]);
    expect(open!.verdict).toBe(true);
    expect(open!.checks[0]!.error).toBe(
      `over the request's guardrail budget: it reads ${LONG.length} characters and 10 of ${budget.total} were left`,
    );
    expect(open!.checks[0]!.explanation).toMatch(/passed \(on_error: open\)/);
    expect(closed!.verdict).toBe(false);
    expect(run.denied?.id).toBe("closed");
    expect(budget.left).toBe(10);
  });

  it("is shared by the phases of a request: what the input spent, the output cannot", async () => {
    const budget = new GuardrailBudget(LONG.length + 100);
    await runGuardrails([guardrail("in", [wordCount(100_000)])], input(["system prompt", LONG]), {
      ...options(),
      budget,
    });
    const output = await runGuardrails(
      [guardrail("out", [wordCount(100_000)])],
      { ...input(["system prompt", LONG]), phase: "output" as const },
      { ...options(), budget },
    );
    expect(output.verdicts[0]!.checks[0]!.error).toMatch(/over the request's guardrail budget/);
  });

  it("a guardrail that only logs is paid for after the ones that hold the request", async () => {
    const budget = new GuardrailBudget(LONG.length);
    const opts = { ...options(), budget };
    const logged: string[] = [];
    const run = await runGuardrails(
      [
        guardrail("log-only", [wordCount(100_000)], { async: true }),
        guardrail("held", [wordCount(10)], { on_error: "open" }),
      ],
      input(["system prompt", LONG]),
      { ...opts, onAsyncVerdict: (verdict) => logged.push(verdict.checks[0]!.error ?? "judged") },
    );
    await Promise.all(opts.pending);
    expect(run.verdicts[0]!.checks[0]!.error).toBeUndefined();
    expect(run.denied?.id).toBe("held");
    expect(logged).toEqual([expect.stringMatching(/over the request's guardrail budget/)]);
  });
});

describe("turns of the event loop", () => {
  it("checks judged on it give it a turn every TURN_MS, never for a short run of them", async () => {
    let turns = 0;
    const count = () => {
      turns++;
      if (!stopped) setImmediate(count);
    };
    let stopped = false;
    setImmediate(count);
    // Ten checks of TURN_MS / 2 each: 5 TURN_MS in all, which must be cut into several turns.
    const checks = Array.from({ length: 10 }, () => ({ id: "test.busy", parameters: { ms: TURN_MS / 2 } }));
    await runGuardrails([guardrail("busy", checks)], input(["short"]), options());
    const during = turns;
    stopped = true;
    expect(during).toBeGreaterThanOrEqual(3);

    // A few quick checks: no turn taken (the usual request pays no hop).
    turns = 0;
    stopped = false;
    setImmediate(count);
    const before = turns;
    await runGuardrails([guardrail("quick", [wordCount(10), wordCount(11)])], input(["short"]), options());
    expect(turns).toBe(before);
    stopped = true;
  });
});
