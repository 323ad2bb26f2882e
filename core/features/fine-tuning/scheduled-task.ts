import type { ScheduledTask } from "../../services.ts";

/**
 * Refreshes every unfinished fine-tuning job from its provider (the active index of job-store.ts), so a job moves
 * to succeeded, failed or cancelled, its result files copied, without anyone reading it. Idempotent: writes are
 * conditional on the revision read, and a finished job is never written again. One job's failure (the provider
 * down, credentials revoked) is logged and the others go on. The job modules load on the first run only.
 */
export const fineTuningTask: ScheduledTask = {
  name: "fine-tuning",
  everySeconds: 30,
  async run(services, signal) {
    const [{ fineTuningJobStoreOf }, { refreshJob }] = await Promise.all([
      import("./job-store.ts"),
      import("./jobs.ts"),
    ]);
    for await (const stored of fineTuningJobStoreOf(services).active()) {
      if (signal.aborted) return;
      try {
        await refreshJob(services, stored, signal);
      } catch (error) {
        console.warn(`fine-tuning: refreshing ${stored.job.id} failed: ${(error as Error).message}`);
      }
    }
  },
};
