import type { ResourceOwner } from "../../auth/resource-owner.ts";
import { priceUsage } from "../../inference/catalog/load.ts";
import type { InferenceOutcome } from "../../inference/gateway/outcome.ts";
import type { ChatUsage } from "../../providers/types.ts";
import { isPlainObject } from "../../inference/routing/query.ts";
import type { AssistantObjectOwners } from "./object-owners.ts";

/**
 * A run's `usage` is null until the run reaches a terminal status (OpenAI's run object reference); `requires_action`
 * is not one: the run goes on after the tool outputs, and its final usage covers both parts.
 */
const TERMINAL_RUN_STATUSES = new Set(["completed", "failed", "cancelled", "expired", "incomplete"]);

export interface FinishedRun {
  id: string;
  model: string;
  usage: ChatUsage;
}

/** The run, when `value` is a run object in a terminal status that reports its usage. */
export function finishedRunOf(value: unknown): FinishedRun | undefined {
  if (!isPlainObject(value) || value.object !== "thread.run" || typeof value.id !== "string") return undefined;
  if (typeof value.status !== "string" || !TERMINAL_RUN_STATUSES.has(value.status)) return undefined;
  const usage = value.usage;
  if (!isPlainObject(usage)) return undefined;
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens;
  if (typeof prompt !== "number" || typeof completion !== "number") return undefined;
  const total = typeof usage.total_tokens === "number" ? usage.total_tokens : prompt + completion;
  return {
    id: value.id,
    model: typeof value.model === "string" ? value.model : "",
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: total },
  };
}

/** Who is asking and where the call's usage goes. */
export interface CallScope {
  owners: AssistantObjectOwners;
  owner: ResourceOwner;
  outcome: InferenceOutcome;
  /** The provider that answered (prices differ between OpenAI and Azure OpenAI). */
  provider: string;
}

/**
 * Puts a finished run's tokens and cost on this call's outcome, unless an earlier call (a poll, the stream that
 * ran it) logged them already: each run is counted once.
 */
export async function recordRunUsage(run: FinishedRun, scope: CallScope): Promise<void> {
  if (!(await scope.owners.markUsageLogged(run.id, scope.owner))) return;
  const { outcome } = scope;
  outcome.usage = run.usage;
  if (run.model) outcome.answeredModel = run.model;
  outcome.cost = await priceUsage(scope.provider, run.model, run.usage);
}
