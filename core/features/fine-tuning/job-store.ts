import { type ResourceOwner, ownerKey } from "../../auth/resource-owner.ts";
import { newId } from "../../util/ids.ts";
import type { Services } from "../../services.ts";
import { ConditionFailedError, type RecordItem, type Records } from "../../store/ports.ts";
import { type FineTuningJob, type StoredFineTuningJob, TERMINAL_FINE_TUNING_STATUSES } from "./types.ts";

/**
 * Fine-tuning jobs in Records, on single-item conditional writes:
 * - one item per job, pk `FTJOB#<org>#<workspace>` (the owner: another workspace's caller never reaches it), sk
 *   the job id (ids sort by creation time, so a partition reads newest first in descending order);
 * - while the job is not finished, the item is in the active index (gsi1pk `FTJOB#ACTIVE`) that the scheduled
 *   refresh reads; a terminal status removes it from the index.
 * Every write is conditional on the revision it read, and a finished job is never written again.
 */

const ACTIVE = "FTJOB#ACTIVE";
const partition = (owner: ResourceOwner) => `FTJOB#${ownerKey(owner)}`;
/** Job ids the gateway makes are `ftjob-...`; anything else cannot name one. */
const JOB_ID = /^ftjob-[a-z0-9]{1,64}$/;

export const newJobId = () => `ftjob-${newId("x").slice(2)}`;

function itemOf(stored: StoredFineTuningJob): RecordItem {
  const active = !TERMINAL_FINE_TUNING_STATUSES.has(stored.job.status);
  return {
    pk: partition(stored.owner),
    sk: stored.job.id,
    ...(active ? { gsi1pk: ACTIVE, gsi1sk: stored.job.id } : {}),
    job: stored.job,
    owner: stored.owner,
    request: stored.request,
    provider: stored.provider,
    providerJobId: stored.providerJobId,
    resultFiles: stored.resultFiles,
    revision: stored.revision,
  };
}

function storedOf(item: RecordItem): StoredFineTuningJob {
  return {
    job: item.job as FineTuningJob,
    owner: item.owner as ResourceOwner,
    request: item.request as StoredFineTuningJob["request"],
    provider: String(item.provider),
    providerJobId: String(item.providerJobId),
    resultFiles: (item.resultFiles ?? {}) as Record<string, string>,
    revision: Number(item.revision ?? 0),
  };
}

export interface JobPage {
  items: StoredFineTuningJob[];
  hasMore: boolean;
}

export class FineTuningJobStore {
  readonly #records: Records;

  constructor(records: Records) {
    this.#records = records;
  }

  async create(stored: StoredFineTuningJob): Promise<void> {
    await this.#records.put(itemOf({ ...stored, revision: 1 }), { exists: false });
  }

  /** The job, or undefined when absent or another workspace's. */
  async get(owner: ResourceOwner, id: string): Promise<StoredFineTuningJob | undefined> {
    if (!JOB_ID.test(id)) return undefined;
    const item = await this.#records.get(partition(owner), id);
    return item ? storedOf(item) : undefined;
  }

  /**
   * Replaces the job object (and the copied result files) of `current`, if nobody wrote it since it was read and it
   * is not finished. Returns the stored job after the write, or undefined when the write lost (read it again).
   */
  async update(
    current: StoredFineTuningJob,
    change: { job: FineTuningJob; resultFiles?: Record<string, string> },
  ): Promise<StoredFineTuningJob | undefined> {
    if (TERMINAL_FINE_TUNING_STATUSES.has(current.job.status)) return undefined;
    const next: StoredFineTuningJob = {
      ...current,
      job: change.job,
      resultFiles: change.resultFiles ?? current.resultFiles,
      revision: current.revision + 1,
    };
    try {
      await this.#records.put(itemOf(next), { equals: { revision: current.revision } });
      return next;
    } catch (error) {
      if (error instanceof ConditionFailedError) return undefined;
      throw error;
    }
  }

  /**
   * Newest first, after the job `after` (exclusive), keeping those whose metadata holds every given pair. Pages of
   * the store are read until the page is full, so a filter never answers a short page while more may match.
   */
  async list(
    owner: ResourceOwner,
    query: { after?: string; limit: number; metadata: Record<string, string> },
  ): Promise<JobPage> {
    const wanted = Object.entries(query.metadata);
    const matches = (job: FineTuningJob) => wanted.every(([key, value]) => job.metadata?.[key] === value);
    const items: StoredFineTuningJob[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.#records.query({
        partition: partition(owner),
        order: "desc",
        ...(query.after ? { to: query.after } : {}),
        limit: Math.min(1000, Math.max(query.limit + 1, 100)),
        cursor,
      });
      for (const item of page.items) {
        if (item.sk === query.after) continue;
        const stored = storedOf(item);
        if (!matches(stored.job)) continue;
        items.push(stored);
        if (items.length > query.limit) return { items: items.slice(0, query.limit), hasMore: true };
      }
      cursor = page.cursor;
    } while (cursor);
    return { items, hasMore: false };
  }

  /** Every job not yet finished, over all workspaces (the scheduled refresh). */
  async *active(): AsyncGenerator<StoredFineTuningJob> {
    let cursor: string | undefined;
    do {
      const page = await this.#records.query({ partition: ACTIVE, index: "gsi1", limit: 100, cursor });
      for (const item of page.items) yield storedOf(item);
      cursor = page.cursor;
    } while (cursor);
  }
}

const stores = new WeakMap<Records, FineTuningJobStore>();

export function fineTuningJobStoreOf(services: Pick<Services, "stores">): FineTuningJobStore {
  const records = services.stores.records;
  let store = stores.get(records);
  if (!store) {
    store = new FineTuningJobStore(records);
    stores.set(records, store);
  }
  return store;
}
