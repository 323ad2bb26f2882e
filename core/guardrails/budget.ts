import { setImmediate as nextTurn } from "node:timers/promises";
import type { CheckDefinition, CheckInput, CheckThreads } from "./types.ts";

/**
 * What bounds the CPU a request's guardrails take (docs/guardrails.md#long-texts-and-the-budget). A check's
 * cost is the characters it reads (`CheckDefinition.cost`; the judged text's length by default).
 * - The budget: the characters a request's checks may read in all, across its phases. A check the budget left
 *   cannot pay for does not run: like a check that timed out, it follows its guardrail's `on_error`.
 * - Where a check is judged: on the event loop when it reads at most INLINE_MAX_CHARS (every usual request: no
 *   thread hop, no promise hop), else on a worker thread when it is self-contained and the platform has threads.
 *   On a thread its time limit stops it; on the event loop nothing can stop synchronous work.
 * - Turns: checks judged on the event loop give it a turn once they have held it TURN_MS, so many checks on
 *   middling texts never add up to one long block.
 */

/** Above this many characters read, a self-contained check is judged on a worker thread (when there are some). */
export const INLINE_MAX_CHARS = 64 * 1024;

/** How long checks judged on the event loop may hold it before they give it a turn. */
export const TURN_MS = 20;

/** The characters a request's checks may still read. */
export class GuardrailBudget {
  readonly total: number;
  #left: number;

  constructor(total: number) {
    this.total = total;
    this.#left = total;
  }

  get left(): number {
    return this.#left;
  }

  /** Spends `cost` if that much is left; false (nothing spent) if not. */
  spend(cost: number): boolean {
    if (cost > this.#left) return false;
    this.#left -= cost;
    return true;
  }
}

/** Where one check is judged, or why it is not. */
export type Placement = { where: "inline" | "thread" } | { where: "over-budget"; message: string };

/** Spends the check's cost from the budget and says where it runs. */
export function placeCheck(
  check: CheckDefinition,
  parameters: unknown,
  input: Pick<CheckInput, "text" | "parts">,
  options: { budget?: GuardrailBudget; threads?: CheckThreads },
): Placement {
  const cost = check.cost ? check.cost(input, parameters) : input.text.length;
  const { budget, threads } = options;
  if (budget && !budget.spend(cost)) {
    return {
      where: "over-budget",
      message:
        `over the request's guardrail budget: it reads ${cost} characters and ${budget.left} of ` +
        `${budget.total} were left`,
    };
  }
  const offLoop = cost > INLINE_MAX_CHARS && threads !== undefined && check.selfContained?.(parameters) === true;
  return { where: offLoop ? "thread" : "inline" };
}

/** Gives the event loop a turn once the checks judged on it since the last turn have held it TURN_MS. */
export class Turns {
  #since = performance.now();

  /** Undefined while this turn has time left (the caller goes on without a promise hop); else the next turn. */
  next(): Promise<void> | undefined {
    if (performance.now() - this.#since < TURN_MS) return undefined;
    return nextTurn().then(() => {
      this.#since = performance.now();
    });
  }
}

/** The cost of a check that reads every part of the phase (a phase without parts is judged on its text). */
export const partsCost = (input: Pick<CheckInput, "text" | "parts">): number =>
  input.parts.length > 0 ? input.parts.reduce((sum, part) => sum + part.length, 0) : input.text.length;

/** The cost of a check that reads no text. */
export const readsNoText = (): number => 0;
