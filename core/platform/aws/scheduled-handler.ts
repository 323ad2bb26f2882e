import type { Services } from "../../services.ts";
import { SCHEDULED_TASKS, type ScheduledTask } from "../../routes/scheduled-tasks.ts";
import { lazy } from "./lazy.ts";
import { servicesFromEnv } from "./services-from-env.ts";

/** Margin left before the Lambda's deadline: tasks are told to stop, and a task still running is not awaited. */
const DEADLINE_MARGIN_MS = 10_000;

interface LambdaContext {
  getRemainingTimeInMillis?(): number;
}

export type ScheduledHandler = (event: unknown, context?: LambdaContext) => Promise<{ failed: string[] }>;

/**
 * The Lambda entry point of the scheduled worker (functions/workers/scheduled.ts, run every minute by
 * infra/workers.ts): every scheduled task once, side by side. A task that throws is reported and retried at the
 * next tick; the others are unaffected. Tasks get a signal aborted shortly before the Lambda's deadline.
 */
export function createScheduledHandler(
  init: () => Promise<Services> = async () => servicesFromEnv(),
  tasks: readonly ScheduledTask[] = SCHEDULED_TASKS,
): ScheduledHandler {
  const services = lazy(init);
  return async (_event, context) => {
    const remaining = context?.getRemainingTimeInMillis?.() ?? 60_000;
    const signal = AbortSignal.timeout(Math.max(1000, remaining - DEADLINE_MARGIN_MS));
    const ready = await services();
    const failed: string[] = [];
    await Promise.all(
      tasks.map(async (task) => {
        try {
          await task.run(ready, signal);
        } catch (error) {
          failed.push(task.name);
          console.error(`scheduled task '${task.name}' failed`, error);
        }
      }),
    );
    return { failed };
  };
}
