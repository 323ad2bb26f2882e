import { checkSpecProblem, findCheck } from "../../../../../core/inference/guardrails/checks/registry.ts";
import type { CheckInput, CheckResult, GuardrailPhase } from "../../../../../core/inference/guardrails/types.ts";

/**
 * Runs a check the way the runner does: the id resolved through the registry, the parameters validated and
 * filled in by `checkSpecProblem` (a problem fails the test), then `run` on the input.
 */
export async function runCheck(
  id: string,
  parameters: Record<string, unknown>,
  input: CheckInput,
): Promise<CheckResult> {
  const spec = { id, parameters };
  const problem = await checkSpecProblem(spec, input.phase);
  if (problem) throw new Error(`${id}: ${problem.path}: ${problem.message}`);
  const check = (await findCheck(id))!;
  return check.run(input, spec.parameters);
}

/** The problem `checkSpecProblem` finds with these parameters (undefined: none). */
export async function problemOf(
  id: string,
  parameters: Record<string, unknown>,
  phase?: GuardrailPhase,
): Promise<{ path: string; message: string } | undefined> {
  return checkSpecProblem({ id, parameters }, phase);
}
