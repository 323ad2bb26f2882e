import { type GuardrailBudget, placeCheck, Turns } from "./budget.ts";
import { findCheck } from "./checks/registry.ts";
import type {
  CheckDefinition,
  CheckInput,
  CheckSpec,
  CheckThreads,
  CheckVerdict,
  GuardrailDefinition,
  GuardrailVerdict,
  PhaseRun,
  RunGuardrails,
  ThreadedCheckInput,
} from "./types.ts";

/**
 * Runs one phase's guardrails over a request's input or its answer (the contract is `RunGuardrails` in
 * types.ts):
 * - of the guardrails that hold the request, the checks that may rewrite the texts (PII redaction, a webhook) run
 *   first, one after another in the order written, each on the previous rewrite; every other check then starts
 *   on the result and they run concurrently, so a guardrail's latency is its slowest check, not their sum;
 * - async guardrails then start on the texts as they came, are handed to `waitUntil` and only logged;
 * - each check spends what it reads from the request's budget and runs on the event loop or, on a long text, on
 *   a worker thread (budget.ts); checks judged on the event loop give it a turn every TURN_MS;
 * - each check is bounded by its guardrail's `timeout_ms`; one that throws, times out or is over the budget
 *   passes (`on_error: open`, the error logged) or fails (`closed`).
 */
export const runGuardrails: RunGuardrails = async (definitions, input, options) => {
  const textOf = options.textOf ?? lastPart;
  const held = definitions.filter((definition) => !definition.actions.async);
  const run: PhaseRun = held.length > 0 ? await runHeld(held, input, options, textOf) : { verdicts: [] };
  // Started after the held guardrails have spent what they read: a guardrail that only logs never leaves one
  // that denies over the budget.
  for (const definition of definitions) {
    if (!definition.actions.async) continue;
    // An async guardrail outlives the request if need be (the platform waits for it), bounded by its timeouts.
    const work = runGuardrail(definition, { ...input }, new AbortController().signal, { ...options, textOf }).then(
      (result) => options.onAsyncVerdict?.(result.verdict),
    );
    options.waitUntil(work.catch((error) => console.error("async guardrail failed", (error as Error).message)));
  }
  return run;
};

type RunOptions = Parameters<RunGuardrails>[2];

/** Where the checks of one phase run: the request's signal, budget and threads, and the event loop's turns. */
interface CheckContext {
  signal: AbortSignal;
  budget?: GuardrailBudget;
  threads?: CheckThreads;
  turns: Turns;
}

/** The guardrails that hold the request: rewriting checks in order, then the others concurrently. */
async function runHeld(
  held: readonly GuardrailDefinition[],
  input: Omit<CheckInput, "signal">,
  options: RunOptions,
  textOf: (parts: readonly string[]) => string,
): Promise<PhaseRun> {
  const started = new Map<GuardrailDefinition, number>();
  const results = new Map<GuardrailDefinition, CheckVerdict[]>();
  for (const definition of held) {
    started.set(definition, performance.now());
    results.set(definition, []);
  }
  const context: CheckContext = {
    signal: options.signal,
    budget: options.budget,
    threads: options.threads,
    turns: new Turns(),
  };

  // Rewriting checks, in order, each on the texts the previous one left.
  let parts = input.parts;
  let rewritten = false;
  const plan = await planChecks(held);
  for (const step of plan.rewriting) {
    const turn = context.turns.next();
    if (turn) await turn;
    const current = { ...input, parts, text: rewritten ? textOf(parts) : input.text };
    const outcome = await runCheck(step, current, context);
    results.get(step.definition)!.push(outcome.verdict);
    if (outcome.transformedParts && outcome.transformedParts.length === parts.length) {
      parts = outcome.transformedParts;
      rewritten = true;
    }
  }

  // The rest, concurrently, on the rewritten texts; the event loop gets a turn between long stretches of them.
  const current = rewritten ? { ...input, parts, text: textOf(parts) } : input;
  const running: Promise<CheckOutcome>[] = [];
  for (const step of plan.others) {
    const turn = context.turns.next();
    if (turn) await turn;
    running.push(runCheck(step, current, context));
  }
  const concurrent = await Promise.all(running);
  for (const [index, step] of plan.others.entries()) results.get(step.definition)!.push(concurrent[index]!.verdict);

  const verdicts = held.map((definition) =>
    guardrailVerdict(
      definition,
      input.phase,
      orderedLike(definition, results.get(definition)!),
      started.get(definition)!,
    ),
  );
  const denied = verdicts.find((verdict) => !verdict.verdict && verdict.deny);
  const run: PhaseRun = { verdicts };
  if (denied) run.denied = denied;
  if (rewritten) run.transformedParts = parts;
  return run;
}

/** One guardrail alone (async ones, and the invoke endpoint): the same two stages over its checks. */
export async function runGuardrail(
  definition: GuardrailDefinition,
  input: Omit<CheckInput, "signal">,
  signal: AbortSignal,
  options: Pick<RunOptions, "textOf" | "budget" | "threads"> = {},
): Promise<{ verdict: GuardrailVerdict; transformedParts?: string[] }> {
  const run = await runHeld(
    [definition],
    input,
    { ...options, signal, waitUntil: () => {} },
    options.textOf ?? lastPart,
  );
  const verdict = { ...run.verdicts[0]!, async: definition.actions.async };
  return run.transformedParts ? { verdict, transformedParts: run.transformedParts } : { verdict };
}

const lastPart = (parts: readonly string[]) => parts.at(-1) ?? "";

interface CheckStep {
  definition: GuardrailDefinition;
  spec: CheckSpec;
  check?: CheckDefinition;
  parameters?: unknown;
  /** Why the check cannot run (unknown id, parameters refused): it then follows `on_error`. */
  problem?: string;
}

/** Each enabled check with its parsed parameters, split into rewriting ones and the rest. */
async function planChecks(
  definitions: readonly GuardrailDefinition[],
): Promise<{ rewriting: CheckStep[]; others: CheckStep[] }> {
  const rewriting: CheckStep[] = [];
  const others: CheckStep[] = [];
  for (const definition of definitions) {
    for (const spec of definition.checks) {
      if (spec.is_enabled === false) continue;
      // Awaited only the first time a spec is seen: after that, the request goes on without a promise hop.
      const check = preparedChecks.get(spec) ?? (await prepare(spec));
      const step: CheckStep = { definition, spec, ...check };
      if (step.check?.rewrites?.(step.parameters) === true) rewriting.push(step);
      else others.push(step);
    }
  }
  return { rewriting, others };
}

type PreparedCheck = Pick<CheckStep, "check" | "parameters" | "problem">;

/** Found, loaded and parsed once per check spec: stored and compiled guardrails keep their spec objects. */
const preparedChecks = new WeakMap<CheckSpec, PreparedCheck>();

async function prepare(spec: CheckSpec): Promise<PreparedCheck> {
  const check = await findCheck(spec.id);
  if (!check) return { problem: `unknown check '${spec.id}'` };
  await check.load?.();
  const result = check.parameters.safeParse(spec.parameters ?? {});
  const prepared = result.success
    ? { check, parameters: result.data, problem: check.problem?.(result.data) }
    : { check, problem: `invalid parameters: ${result.error.issues[0]?.message ?? "refused"}` };
  preparedChecks.set(spec, prepared);
  return prepared;
}

interface CheckOutcome {
  verdict: CheckVerdict;
  transformedParts?: string[];
}

async function runCheck(
  step: CheckStep,
  input: Omit<CheckInput, "signal">,
  context: CheckContext,
): Promise<CheckOutcome> {
  const { definition, spec, check } = step;
  const started = performance.now();
  const base = { id: spec.id, ...(spec.name ? { name: spec.name } : {}) };
  const failOpen = definition.actions.on_error !== "closed";
  const errored = (message: string) => ({
    verdict: {
      ...base,
      verdict: failOpen,
      explanation: `The check could not run (${message}); ${failOpen ? "passed (on_error: open)" : "failed (on_error: closed)"}.`,
      error: message,
      transformed: false,
      execution_time_ms: elapsed(started),
    },
  });
  if (!check || step.problem) return errored(step.problem ?? "unknown check");
  const placement = placeCheck(check, step.parameters, input, context);
  if (placement.where === "over-budget") return errored(placement.message);
  // One controller per check, aborted by its time limit or by the request; the timer is cleared as soon as the
  // check is done (AbortSignal.timeout's timer would fire seconds after every request, for nothing).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${definition.actions.timeout_ms} ms`, "TimeoutError"));
  }, definition.actions.timeout_ms);
  const requestSignal = context.signal;
  const onRequestAbort = () => controller.abort(requestSignal.reason);
  if (requestSignal.aborted) onRequestAbort();
  else requestSignal.addEventListener("abort", onRequestAbort, { once: true });
  const signal = controller.signal;
  try {
    const ran =
      placement.where === "thread"
        ? context.threads!.run({ id: check.id, parameters: step.parameters, input: threadedInput(input) }, signal)
        : check.run({ ...input, signal }, step.parameters);
    // A check that answered at once (most do) needs no race against its signal.
    const result = ran instanceof Promise ? await untilAborted(ran, signal) : ran;
    const rewrites = check.rewrites?.(step.parameters) === true && result.transformedParts !== undefined;
    const verdict: CheckVerdict = {
      ...base,
      verdict: result.verdict,
      explanation: result.explanation,
      ...(result.data ? { data: result.data } : {}),
      transformed: rewrites && result.transformedParts!.some((part, index) => part !== input.parts[index]),
      execution_time_ms: elapsed(started),
    };
    return rewrites ? { verdict, transformedParts: result.transformedParts } : { verdict };
  } catch (error) {
    const message = timedOut
      ? `timed out after ${definition.actions.timeout_ms} ms`
      : requestSignal.aborted
        ? "the request was cancelled"
        : (error as Error).message || String(error);
    return errored(message);
  } finally {
    clearTimeout(timer);
    requestSignal.removeEventListener("abort", onRequestAbort);
  }
}

/** What a check judged on a worker thread is sent: its texts and the little else a self-contained check reads. */
function threadedInput(input: Omit<CheckInput, "signal">): ThreadedCheckInput {
  const { phase, route, text, parts, model, metadata } = input;
  return { phase, route, text, parts, model, metadata };
}

/** The check's promise, or a rejection as soon as the signal aborts (a check that ignores its signal cannot hold the request). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/** The guardrail's check verdicts in the order its checks are written (the two stages finish out of order). */
function orderedLike(definition: GuardrailDefinition, verdicts: CheckVerdict[]): CheckVerdict[] {
  const order = definition.checks.filter((spec) => spec.is_enabled !== false);
  const remaining = [...verdicts];
  const ordered: CheckVerdict[] = [];
  for (const spec of order) {
    const index = remaining.findIndex((verdict) => verdict.id === spec.id && verdict.name === spec.name);
    if (index >= 0) ordered.push(...remaining.splice(index, 1));
  }
  return [...ordered, ...remaining];
}

function guardrailVerdict(
  definition: GuardrailDefinition,
  phase: GuardrailVerdict["phase"],
  checks: CheckVerdict[],
  started: number,
): GuardrailVerdict {
  const passed = checks.every((check) => check.verdict);
  const feedback = (passed ? definition.actions.on_success : definition.actions.on_fail)?.feedback;
  return {
    id: definition.id,
    ...(definition.slug ? { slug: definition.slug } : {}),
    ...(definition.name ? { name: definition.name } : {}),
    phase,
    verdict: passed,
    deny: definition.actions.deny,
    async: definition.actions.async,
    soft_deny_200: definition.actions.soft_deny_200,
    transformed: checks.some((check) => check.transformed),
    checks,
    ...(feedback ? { feedback } : {}),
    execution_time_ms: elapsed(started),
    created_at: new Date().toISOString(),
  };
}

const elapsed = (started: number) => Math.round((performance.now() - started) * 100) / 100;
