import type { CheckDefinition, CheckSpec } from "../types.ts";
import { modelGraded } from "./model-graded.ts";
import { moderation } from "./moderation.ts";
import { pii } from "./pii.ts";
import { regexMatch } from "./regex-match.ts";
import { webhook } from "./webhook.ts";

/**
 * Every built-in check by id (and by its aliases). A check's heavy libraries are imported by its `load()`,
 * never at module load: the data-plane functions import this registry.
 */
// biome-ignore format: one check a line, so checks added side by side merge cleanly
const CHECKS: readonly CheckDefinition[] = [
  regexMatch,
  pii,
  webhook,
  moderation,
  modelGraded,
];

const byId = new Map<string, CheckDefinition>();
for (const check of CHECKS) {
  for (const id of [check.id, ...(check.aliases ?? [])]) {
    if (byId.has(id)) throw new Error(`guardrail check id '${id}' is registered twice`);
    byId.set(id, check);
  }
}

export const findCheck = (id: string): CheckDefinition | undefined => byId.get(id);

export const allChecks = (): readonly CheckDefinition[] => CHECKS;

/**
 * What is wrong with one check of a guardrail (undefined: nothing): unknown id, or parameters its schema or its
 * own `problem` refuses. `path` names the place for the caller's 400 (e.g. `checks[2].parameters.rule`).
 * On success the parameters are replaced by their parsed form (defaults filled in).
 */
export async function checkSpecProblem(spec: CheckSpec): Promise<{ path: string; message: string } | undefined> {
  const check = findCheck(spec.id);
  if (!check) return { path: "id", message: `unknown check '${spec.id}'` };
  const parsed = check.parameters.safeParse(spec.parameters ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = ["parameters", ...issue.path.map(String)].join(".");
    return { path, message: issue.message };
  }
  await check.load?.();
  const problem = check.problem?.(parsed.data);
  if (problem) return { path: "parameters", message: problem };
  spec.parameters = parsed.data as Record<string, unknown>;
  return undefined;
}
