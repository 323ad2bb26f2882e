import type { ScheduledTask } from "../../services.ts";

/**
 * Reconciles the ledgers of saved providers that carry an admin key with the providers' bills
 * (reconcile.ts: throttled per integration, so a tick that finds nothing due reads one index partition). Runs in
 * the scheduled worker on AWS, in the in-process scheduler locally. Its modules load on the first run only.
 */
export const reconciliationTask: ScheduledTask = {
  name: "reconciliation",
  everySeconds: 300,
  async run(services, signal) {
    const { reconcileAll } = await import("./reconcile.ts");
    await reconcileAll(services, signal);
  },
};
