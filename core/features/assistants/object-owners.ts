import { type ResourceOwner, ownerKey } from "../../auth/resource-owner.ts";
import type { Services } from "../../services.ts";
import { ConditionFailedError, type Records } from "../../store/ports.ts";
import type { OwnedKind } from "./operations.ts";

/**
 * Who owns each Assistants API object the gateway saw created (assistants, threads, messages, runs, vector
 * stores, file batches): one small item per object id, pk `ASSTOBJ#<id>`. Provider ids are unique across
 * accounts, so the id alone keys it. A run's item also says whether its usage was logged (`usageLogged`), set by
 * one conditional write so that a run is counted once however often clients poll it.
 */

const SK = "owner";
const partition = (id: string) => `ASSTOBJ#${id}`;
/** Longer ids are not the provider's: never recorded, never looked up. */
const MAX_ID_LENGTH = 256;
const usable = (id: string) => id.length > 0 && id.length <= MAX_ID_LENGTH;

export class AssistantObjectOwners {
  readonly #records: Records;

  constructor(records: Records) {
    this.#records = records;
  }

  /** The recorded owner of an object, or undefined when the gateway never saw it created. */
  async ownerOf(id: string): Promise<ResourceOwner | undefined> {
    if (!usable(id)) return undefined;
    const item = await this.#records.get(partition(id), SK);
    return item ? (item.owner as ResourceOwner) : undefined;
  }

  /** Whether another owner than `owner` holds the object (unrecorded objects are nobody's). */
  async ownedByAnother(id: string, owner: ResourceOwner): Promise<boolean> {
    const recorded = await this.ownerOf(id);
    return recorded !== undefined && ownerKey(recorded) !== ownerKey(owner);
  }

  /** Records the owner of a new object; an object already recorded keeps its owner. */
  async claim(id: string, kind: OwnedKind, owner: ResourceOwner): Promise<void> {
    if (!usable(id)) return;
    try {
      await this.#records.put({ pk: partition(id), sk: SK, kind, owner }, { exists: false });
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  /** Forgets a deleted object. */
  async release(id: string): Promise<void> {
    if (!usable(id)) return;
    await this.#records.delete(partition(id), SK);
  }

  /**
   * Marks a finished run's usage as logged: true for the one call that wins, false for every later one. A run
   * the gateway never saw created is recorded for `owner` on the way.
   */
  async markUsageLogged(runId: string, owner: ResourceOwner): Promise<boolean> {
    if (!usable(runId)) return false;
    try {
      await this.#records.update(
        partition(runId),
        SK,
        { set: { usageLogged: true } },
        { exists: true, equals: { usageLogged: null } },
      );
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
    try {
      await this.#records.put(
        { pk: partition(runId), sk: SK, kind: "run", owner, usageLogged: true },
        { exists: false },
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  }
}

const owners = new WeakMap<Records, AssistantObjectOwners>();

export function assistantObjectOwnersOf(services: Pick<Services, "stores">): AssistantObjectOwners {
  const records = services.stores.records;
  let store = owners.get(records);
  if (!store) {
    store = new AssistantObjectOwners(records);
    owners.set(records, store);
  }
  return store;
}
