import { batchSweepTask } from "../batches/sweep-task.ts";
import { fineTuningTask } from "../fine-tuning/scheduled-task.ts";
import type { Services } from "../services.ts";

/**
 * Periodic work (polling providers' native batches and fine-tuning jobs, expiring and finishing batches). On AWS
 * one scheduled Lambda (functions/workers/scheduled.ts, every minute) runs every task that is due; locally the
 * worker loop runs them on their interval. Tasks must be idempotent and safe to run in two places at once: they
 * change records only with conditional writes.
 */
export interface ScheduledTask {
  name: string;
  /** How often it runs locally; on AWS it runs on every tick of the schedule (one minute). */
  everySeconds: number;
  run(services: Services, signal: AbortSignal): Promise<void>;
}

/** Tasks by name. Families register theirs here (import the task module; keep each module light to load). */
export const SCHEDULED_TASKS: ScheduledTask[] = [batchSweepTask, fineTuningTask];
