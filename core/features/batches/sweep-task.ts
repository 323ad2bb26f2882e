import type { ScheduledTask } from "../../services.ts";

/** The batches sweep (core/features/batches/sweep.ts) as a scheduled task; the engine loads on its first run. */
export const batchSweepTask: ScheduledTask = {
  name: "batches",
  everySeconds: 10,
  run: async (services, signal) => (await import("./sweep.ts")).sweepBatches(services, signal),
};
