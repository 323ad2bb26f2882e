import type { ChatUsage } from "../../../providers/types.ts";
import type { Cost } from "../../catalog/cost.ts";

/**
 * The accounting of a continued answer: one request, several legs (the broken one, the one that finished it, any
 * that broke between). Each leg is priced at its own provider's and model's prices; the request's usage and cost
 * are their sums, which is what its log shows, its usage limits settle and its last chunk reports.
 */

/** Two usages as one: every count added (a detail kept when either leg has it). */
export function addUsage(a: ChatUsage | undefined, b: ChatUsage | undefined): ChatUsage | undefined {
  if (!a || !b) return a ?? b;
  return addNumbers(a, b) as ChatUsage;
}

/**
 * Two costs as one: every amount added, priced only when both were (a leg the catalog cannot price makes the
 * total unknown, never smaller). Fields are added by name, so a breakdown a cost carries is summed too.
 */
export function addCost(a: Cost | undefined, b: Cost | undefined): Cost | undefined {
  if (!a || !b) return a ?? b;
  return { ...(addNumbers(a, b) as Cost), priced: a.priced && b.priced };
}

/** Numbers added key by key, nested objects likewise; other values are the first one's (else the second's). */
function addNumbers(a: Record<string, any>, b: Record<string, any>): Record<string, any> {
  const sum: Record<string, any> = { ...b, ...a };
  for (const key of Object.keys(sum)) {
    const x = a[key];
    const y = b[key];
    if (typeof x === "number" && typeof y === "number") sum[key] = x + y;
    else if (isObject(x) && isObject(y)) sum[key] = addNumbers(x, y);
  }
  return sum;
}

function isObject(value: unknown): value is Record<string, any> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
