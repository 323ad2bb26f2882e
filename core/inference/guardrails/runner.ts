import { findCheck } from "./checks/registry.ts";
import type {
  CheckDefinition,
  CheckInput,
  CheckSpec,
  CheckVerdict,
  GuardrailDefinition,
  GuardrailVerdict,
  PhaseRun,
  RunGuardrails,
} from "./types.ts";

/**
 * Runs one phase's guardrails over a request's input or its answer (the contract is `RunGuardrails` in
 * types.ts):
 * - async guardrails start at once on the texts as they came, are handed to `waitUntil` and only logged;
 * - of the others, the checks that may rewrite the texts (PII redaction, a webhook) run first, one after
 *   another in the order written, each on the previous rewrite; every other check then runs concurrently on the
 *   result, so a guardrail's latency is its slowest check, not their sum;
 * - each check is bounded by its guardrail's `timeout_ms`; one that throws or times out passes (`on_error:
 *   open`, the error logged) or fails (`closed`).
 */
export const runGuardrails: RunGuardrails = async (definitions, input, options) => {
  const textOf = options.textOf ?? ((parts: readonly string[]) => parts.at(-1) ?? "");
  for (const definition of definitions) {
    if (!definition.actions.async) continue;
    // An async guardrail outlives the request if need be (the platform waits for it), bounded by its timeouts.
    const work = runGuardrail(definition, { ...input }, new AbortController().signal, textOf).then((run) =>
      options.onAsyncVerdict?.(run.verdict),
    );
    options.waitUntil(work.catch((error) => console.error("async guardrail failed", (error as Error).message)));
  }
  const held = definitions.filter((definition) => !definition.actions.async);
  if (held.length === 0) return { verdicts: [] };

  const started = new Map<GuardrailDefinition, number>();
  const results = new Map<GuardrailDefinition, CheckVerdict[]>();
  for (const definition of held) {
    started.set(definition, performance.now());
    results.set(definition, []);
  }

  // Rewriting checks, in order, each on the texts the previous one left.
  let parts = input.parts;
  let rewritten = false;
  const plan = await planChecks(held);
  for (const step of plan.rewriting) {
    const current = { ...input, parts, text: rewritten ? textOf(parts) : input.text };
    const outcome = await runCheck(step, current, options.signal);
    results.get(step.definition)!.push(outcome.verdict);
    if (outcome.transformedParts && outcome.transformedParts.length === parts.length) {
      parts = outcome.transformedParts;
      rewritten = true;
    }
  }

  // The rest, concurrently, on the rewritten texts.
  const current = rewritten ? { ...input, parts, text: textOf(parts) } : input;
  const concurrent = await Promise.all(plan.others.map((step) => runCheck(step, current, options.signal)));
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
};

/** One guardrail alone (async ones, and the invoke endpoint): the same two stages over its checks. */
export async function runGuardrail(
  definition: GuardrailDefinition,
  input: Omit<CheckInput, "signal">,
  signal: AbortSignal,
  textOf: (parts: readonly string[]) => string = (parts) => parts.at(-1) ?? "",
): Promise<{ verdict: GuardrailVerdict; transformedParts?: string[] }> {
  const run = await runGuardrails([{ ...definition, actions: { ...definition.actions, async: false } }], input, {
    signal,
    waitUntil: () => {},
    textOf,
  });
  const verdict = { ...run.verdicts[0]!, async: definition.actions.async };
  return run.transformedParts ? { verdict, transformedParts: run.transformedParts } : { verdict };
}

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

async function runCheck(
  step: CheckStep,
  input: Omit<CheckInput, "signal">,
  requestSignal: AbortSignal,
): Promise<{ verdict: CheckVerdict; transformedParts?: string[] }> {
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
  // One controller per check, aborted by its time limit or by the request; the timer is cleared as soon as the
  // check is done (AbortSignal.timeout's timer would fire seconds after every request, for nothing).
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`timed out after ${definition.actions.timeout_ms} ms`, "TimeoutError"));
  }, definition.actions.timeout_ms);
  const onRequestAbort = () => controller.abort(requestSignal.reason);
  if (requestSignal.aborted) onRequestAbort();
  else requestSignal.addEventListener("abort", onRequestAbort, { once: true });
  const signal = controller.signal;
  try {
    const ran = check.run({ ...input, signal }, step.parameters);
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
