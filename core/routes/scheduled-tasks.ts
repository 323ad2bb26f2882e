import { batchSweepTask } from "../features/batches/sweep-task.ts";
import { fineTuningTask } from "../features/fine-tuning/scheduled-task.ts";
import { reconciliationTask } from "../observe/reconciliation/scheduled-task.ts";
import type { ScheduledTask } from "../services.ts";

export type { ScheduledTask } from "../services.ts";

/** Every scheduled task (ScheduledTask in core/services.ts). Keep each task module light to load: import lazily. */
export const SCHEDULED_TASKS: ScheduledTask[] = [batchSweepTask, fineTuningTask, reconciliationTask];
