import { batchSweepTask } from "../batches/sweep-task.ts";
import { fineTuningTask } from "../fine-tuning/scheduled-task.ts";
import type { ScheduledTask } from "./scheduled-task.ts";

export type { ScheduledTask } from "./scheduled-task.ts";

/** Every scheduled task (core/workers/scheduled-task.ts). Keep each task module light to load: import lazily. */
export const SCHEDULED_TASKS: ScheduledTask[] = [batchSweepTask, fineTuningTask];
