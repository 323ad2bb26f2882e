import { randomUUID } from "node:crypto";
import { ConditionFailedError, type Records } from "../../store/ports.ts";
import { nowSeconds } from "../../store/record-rules.ts";
import type { ScheduledTask } from "../../workers/scheduled-task.ts";

const LEASE_PARTITION = "LEASE";

/**
 * Leases on Records: a conditional put of an item that expires (`ttl`) claims a name for a while; only the
 * holder may renew it, and once it lapses anyone may claim it. Several gateway processes on one database use
 * them so that one process at a time runs each piece of scheduled work.
 */
export class Leases {
  readonly holder: string;
  readonly #records: Records;

  constructor(records: Records, holder = `${process.pid}-${randomUUID()}`) {
    this.#records = records;
    this.holder = holder;
  }

  /** Claims (or renews, when this holder has it) `name` for `seconds`; false when another holder has it. */
  async claim(name: string, seconds: number): Promise<boolean> {
    const item = { pk: LEASE_PARTITION, sk: name, holder: this.holder, ttl: nowSeconds() + seconds };
    try {
      await this.#records.put(item, { exists: false });
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
    try {
      await this.#records.put(item, { equals: { holder: this.holder } });
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }

  /** Gives `name` up if this holder has it, so another process need not wait for it to lapse. */
  async release(name: string): Promise<void> {
    await this.#records.delete(LEASE_PARTITION, name, { equals: { holder: this.holder } }).catch((error) => {
      if (!(error instanceof ConditionFailedError)) throw error;
    });
  }
}

/**
 * `task` run by one process at a time: each tick claims the task's lease for its interval and runs only if it
 * got it, renewing the lease while a long run lasts. A process that dies holding it delays the task by at most
 * one interval; the others take over once the lease lapses.
 */
export function claimedTask(task: ScheduledTask, leases: Leases): ScheduledTask {
  const name = `task:${task.name}`;
  return {
    name: task.name,
    everySeconds: task.everySeconds,
    async run(services, signal) {
      if (!(await leases.claim(name, task.everySeconds))) return;
      const renew = setInterval(
        () => void leases.claim(name, task.everySeconds).catch(() => {}),
        (task.everySeconds * 1000) / 3,
      );
      renew.unref();
      try {
        await task.run(services, signal);
      } finally {
        clearInterval(renew);
      }
    },
  };
}
