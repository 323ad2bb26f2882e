import type { Services } from "../services.ts";

/**
 * Periodic work (polling providers' native batches and fine-tuning jobs, expiring and finishing batches). On AWS
 * one scheduled Lambda (functions/workers/scheduled.ts, every minute) runs every task; locally the worker loop
 * runs them on their interval. Tasks must be idempotent and safe to run in two places at once: they change records
 * only with conditional writes. The tasks are listed in core/workers/scheduled.ts.
 */
export interface ScheduledTask {
  name: string;
  /** How often it runs locally; on AWS it runs on every tick of the schedule (one minute). */
  everySeconds: number;
  run(services: Services, signal: AbortSignal): Promise<void>;
}
