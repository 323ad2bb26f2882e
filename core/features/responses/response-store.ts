import { newId } from "../../util/ids.ts";
import type { Services } from "../../services.ts";
import { ConditionFailedError, type Blobs, type RecordItem, type Records } from "../../store/ports.ts";
import { continuedConversation, previousResponseNotFinished, previousResponseNotFound } from "./conversation.ts";
import type { InputItemQuery, ResponseItemList } from "./input-item-page.ts";
import { assignItemIds } from "./item-ids.ts";
import { type ResponseOwner, workspaceOf } from "./owner.ts";
import { loadOnce } from "../../util/load-once.ts";

const inputItemPages = loadOnce(() => import("./input-item-page.ts"));

/**
 * Stored responses (`store: true`, the default of OpenAI's Responses API): what `GET /responses/{id}`,
 * `.../input_items`, `DELETE`, `.../cancel` and `previous_response_id` read.
 *
 * Layout, on single-item conditional writes only (DynamoDB without transactions):
 * - an index item, pk `RESPONSE#<org>#<workspace>#<id>`, sk `RESPONSE`: owner (org, ws), status, created_at, model,
 *   provider, native, target (the key of the target that answered: target-key.ts), background, previousResponseId,
 *   the key of the blob holding the JSON, and `ttl` = created + retention (past it the response is absent on every
 *   platform). The id is a provider's (`resp_...` from OpenAI and the like, or any string a custom host sends), so
 *   it is unique only per owner: two workspaces whose providers answered with the same id each store and read
 *   their own. Responses stored before the key held the owner (pk `RESPONSE#<id>`) are still read, for their
 *   owner, until their ttl;
 * - the JSON (response, input items, context) in one blob under `responses/<org>/<workspace>/<id>/`: it may be far
 *   larger than a DynamoDB item's 400 KB. A status change writes a new blob and then moves the index's pointer with
 *   a condition on the pointer it read, so two writers never mix halves of each other's writes, and a `cancelled`
 *   response is never overwritten by a run that finishes late (the loser deletes its blob).
 * - an item index, pk `RESPONSE_ITEM#<org>#<workspace>#<item id>`, sk `ITEM`, per output item that has an id: the
 *   response's id, written with the response, so that an `item_reference` input item finds the item it names (same
 *   ttl);
 * Blobs do not expire by themselves: past the ttl they are unreachable; an S3 lifecycle rule on `responses/` (of
 * the retention's length) reclaims them on AWS.
 */

export type ResponseStatus = "queued" | "in_progress" | "completed" | "incomplete" | "failed" | "cancelled";

export interface StoredResponse {
  /** The Response object, in the gateway's internal (2026-07-30) shape. */
  response: Record<string, any>;
  /** This request's own input items, ids assigned (assignItemIds). */
  inputItems: Record<string, any>[];
  /** Every item the model was sent: the previous conversation (previous_response_id) and then this input. */
  context: Record<string, any>[];
  /** The provider that answered. */
  provider?: string;
  /** Whether the provider was called in the Responses format (rather than through its chat adapter). */
  native: boolean;
  /**
   * The key of the target that answered (core/inference/gateway/target-key.ts: its integration, or a hash of its
   * account, key and host): a chain continues there while it is available.
   */
  target?: string;
}

/** What a `previous_response_id` continues: the conversation, and who made it. */
export interface ResponseChain {
  items: Record<string, any>[];
  provider?: string;
  target?: string;
}

/** The outcome of setStatus for a response that exists. */
export interface StatusChange {
  /** False when the current status does not allow the change (e.g. already cancelled or finished). */
  applied: boolean;
  /** The stored response after the call (unchanged when not applied). */
  entry: StoredResponse;
}

export interface ResponseStoreOptions {
  /** Days a stored response is kept (GATEWAY_RESPONSES_RETENTION_DAYS). */
  retentionDays: number;
  /** Unix ms; tests move time. */
  now?: () => number;
}

const SORT = "RESPONSE";
const partition = (owner: ResponseOwner, id: string) => `RESPONSE#${owner.organisationId}#${workspaceOf(owner)}#${id}`;
/** Where responses were stored before the key held their owner (read only; gone with their ttl). */
const legacyPartition = (id: string) => `RESPONSE#${id}`;
const ITEM_SORT = "ITEM";
/** An output item's index, under its owner as responses are (ids are the providers': two workspaces may share one). */
const itemPartition = (owner: ResponseOwner, itemId: string) =>
  `RESPONSE_ITEM#${owner.organisationId}#${workspaceOf(owner)}#${itemId}`;
export const RESPONSES_BLOB_PREFIX = "responses/";

/** Statuses a status may move to: a finished (or cancelled) response never changes again. */
const NEXT: Record<ResponseStatus, readonly ResponseStatus[]> = {
  queued: ["in_progress", "completed", "incomplete", "failed", "cancelled"],
  in_progress: ["completed", "incomplete", "failed", "cancelled"],
  completed: [],
  incomplete: [],
  failed: [],
  cancelled: [],
};

/** Response ids the gateway makes are `resp_...`; anything else (slashes, huge strings) cannot name one. */
const RESPONSE_ID = /^[A-Za-z0-9_-]{1,200}$/;

/** Concurrent writers retry this often before giving up (each round another writer made progress). */
const MAX_ATTEMPTS = 8;

/**
 * Pauses before looking again for a previous response that is not stored yet (ms; 0.7 s in all). A response is
 * stored before its answer (or its stream's last event) is sent, so a chain never needs them on one store; they
 * cover a store whose replicas lag (another gateway process reading a replica of the database).
 */
const UNSTORED_RETRY_MS = [100, 200, 400];

export class ResponseStore {
  readonly #records: Records;
  readonly #blobs: Blobs;
  readonly #retentionSeconds: number;
  readonly #now: () => number;

  constructor(records: Records, blobs: Blobs, options: ResponseStoreOptions) {
    this.#records = records;
    this.#blobs = blobs;
    this.#retentionSeconds = options.retentionDays * 86_400;
    this.#now = options.now ?? Date.now;
  }

  /** Input items ready to store: see core/features/responses/item-ids.ts. */
  assignItemIds(input: string | ReadonlyArray<Record<string, any>>): Record<string, any>[] {
    return assignItemIds(input);
  }

  /**
   * Stores a new response (once per id and owner: ConditionFailedError if the owner already has one with this id).
   * Later changes of a background response go through setStatus.
   */
  async save(owner: ResponseOwner, entry: StoredResponse): Promise<void> {
    const id = String(entry.response.id);
    if (!RESPONSE_ID.test(id)) throw new RangeError(`not a response id: ${JSON.stringify(id)}`);
    const nowSeconds = Math.floor(this.#now() / 1000);
    const createdAt = typeof entry.response.created_at === "number" ? entry.response.created_at : nowSeconds;
    const ttl = nowSeconds + this.#retentionSeconds;
    const blob = await this.#writeBlob(owner, id, entry);
    const item: RecordItem = {
      pk: partition(owner, id),
      sk: SORT,
      id,
      org: owner.organisationId,
      ...(workspaceOf(owner) ? { ws: workspaceOf(owner) } : {}),
      status: String(entry.response.status ?? "completed"),
      createdAt,
      model: entry.response.model,
      provider: entry.provider,
      native: entry.native,
      target: entry.target,
      background: entry.response.background === true,
      previousResponseId: entry.response.previous_response_id ?? undefined,
      blob,
      // Kept from when it is stored: a provider's `created_at` may be far off the gateway's clock.
      ttl,
    };
    for (const name of Object.keys(item)) if (item[name] === undefined) delete item[name];
    try {
      // The index item and the output items' index together: one round trip (one commit of the local batch), the
      // whole of the write a client waits for before its answer ends.
      await Promise.all([this.#records.put(item, { exists: false }), this.#indexItems(owner, id, entry, ttl)]);
    } catch (error) {
      await this.#blobs.delete(blob).catch(() => {});
      throw error;
    }
  }

  /** The stored response, or undefined when absent, expired, or another workspace's (a 404, never a 403). */
  async get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const item = await this.#ownedItem(owner, id);
      if (!item) return undefined;
      const entry = await this.#readEntry(item);
      if (entry) return entry;
      // The blob was replaced by a status change between the two reads: read the index again.
    }
    return undefined;
  }

  /** The stored status alone (one index read), or undefined when absent: what a running background run polls. */
  async status(owner: ResponseOwner, id: string): Promise<ResponseStatus | undefined> {
    return (await this.#ownedItem(owner, id))?.status as ResponseStatus | undefined;
  }

  /** True when the response existed (for this owner) and is now deleted, index and blobs. */
  async delete(owner: ResponseOwner, id: string): Promise<boolean> {
    const item = await this.#ownedItem(owner, id);
    if (!item) return false;
    await this.#records.delete(String(item.pk), SORT);
    // A status change racing with this finds the index gone and deletes its own new blob.
    let cursor: string | undefined;
    do {
      const page = await this.#blobs.list(this.#blobPrefix(owner, id), { cursor });
      await Promise.all(page.items.map((blob) => this.#blobs.delete(blob.key)));
      cursor = page.cursor;
    } while (cursor);
    return true;
  }

  /** A page of the response's own input items (spec 2.3), or undefined when the response is absent. */
  async listInputItems(owner: ResponseOwner, id: string, query: InputItemQuery): Promise<ResponseItemList | undefined> {
    const entry = await this.get(owner, id);
    // Paging a stored input (input-item-page.ts) comes with a process's first listing, not its cold start.
    return entry && (await inputItemPages.get()).inputItemPage(entry.inputItems, query);
  }

  /**
   * The items to prepend for a request with `previous_response_id: id`: that response's context, then its output
   * as input items. 404 (param previous_response_id) when unknown; 400 while it is still queued or running.
   */
  async conversation(owner: ResponseOwner, id: string): Promise<Record<string, any>[]> {
    return (await this.chain(owner, id)).items;
  }

  /** The conversation a request continuing from response `id` is sent, and the target that made it. */
  async chain(owner: ResponseOwner, id: string): Promise<ResponseChain> {
    let entry = await this.get(owner, id);
    for (const wait of UNSTORED_RETRY_MS) {
      if (entry) break;
      await new Promise((resolve) => setTimeout(resolve, wait));
      entry = await this.get(owner, id);
    }
    if (!entry) throw previousResponseNotFound(id);
    const status = entry.response.status;
    if (status === "queued" || status === "in_progress") throw previousResponseNotFinished(id, status);
    return {
      items: continuedConversation(entry.context, entry.response.output),
      provider: entry.provider,
      target: entry.target,
    };
  }

  /**
   * Moves a response to `status`, merging `patch` (fields of the Response object: output, usage, error...) into
   * it. Only forward moves apply (queued -> in_progress -> a final status; cancelled and finished responses never
   * change), checked against the stored status by a conditional write. Undefined when the response is absent.
   */
  async setStatus(
    owner: ResponseOwner,
    id: string,
    status: ResponseStatus,
    patch: Record<string, any> = {},
  ): Promise<StatusChange | undefined> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const item = await this.#ownedItem(owner, id);
      if (!item) return undefined;
      const current = await this.#readEntry(item);
      if (!current) continue;
      if (!(NEXT[item.status as ResponseStatus] ?? []).includes(status)) return { applied: false, entry: current };
      const entry = { ...current, response: { ...current.response, ...patch, id, status } };
      const blob = await this.#writeBlob(owner, id, entry);
      try {
        await this.#records.update(
          String(item.pk),
          SORT,
          { set: { status, blob } },
          { equals: { blob: item.blob, status: item.status } },
        );
      } catch (error) {
        await this.#blobs.delete(blob).catch(() => {});
        if (error instanceof ConditionFailedError) continue;
        throw error;
      }
      await this.#blobs.delete(String(item.blob)).catch(() => {});
      return { applied: true, entry };
    }
    throw new Error(`response ${id} kept changing while its status was being set`);
  }

  /**
   * An output item of a stored response, by its id (what an `item_reference` input item names), with whether the
   * response came from a provider's native Responses API; undefined when no response of this owner holds it.
   */
  async findOutputItem(
    owner: ResponseOwner,
    itemId: string,
  ): Promise<{ item: Record<string, any>; native: boolean } | undefined> {
    if (!RESPONSE_ID.test(itemId)) return undefined;
    const index = await this.#records.get(itemPartition(owner, itemId), ITEM_SORT);
    if (!index) return undefined;
    const entry = await this.get(owner, String(index.responseId));
    const item = entry?.response.output?.find((output: Record<string, any>) => output?.id === itemId);
    return item && entry ? { item, native: entry.native } : undefined;
  }

  /** One index item per output item with an id (see the layout above). */
  async #indexItems(owner: ResponseOwner, responseId: string, entry: StoredResponse, ttl: number): Promise<void> {
    const output: unknown[] = Array.isArray(entry.response.output) ? entry.response.output : [];
    const ids = output
      .map((item) => (item as Record<string, unknown> | null)?.id)
      .filter((itemId): itemId is string => typeof itemId === "string" && RESPONSE_ID.test(itemId));
    const ws = workspaceOf(owner);
    await Promise.all(
      ids.map((itemId) =>
        this.#records.put({
          pk: itemPartition(owner, itemId),
          sk: ITEM_SORT,
          org: owner.organisationId,
          ...(ws ? { ws } : {}),
          responseId,
          ttl,
        }),
      ),
    );
  }

  /** The owner's index item (its `pk` says where it is: under the owner, or under the legacy key). */
  async #ownedItem(owner: ResponseOwner, id: string): Promise<RecordItem | undefined> {
    if (!RESPONSE_ID.test(id)) return undefined;
    const item =
      (await this.#records.get(partition(owner, id), SORT)) ?? (await this.#records.get(legacyPartition(id), SORT));
    if (!item || item.org !== owner.organisationId || (item.ws ?? "") !== workspaceOf(owner)) return undefined;
    return item;
  }

  async #readEntry(item: RecordItem): Promise<StoredResponse | undefined> {
    const blob = await this.#blobs.get(String(item.blob));
    if (!blob) return undefined;
    const stored = JSON.parse(await new Response(blob.body).text()) as Omit<
      StoredResponse,
      "provider" | "native" | "target"
    >;
    return {
      // The index holds the authoritative status (the blob was written before the pointer moved).
      response: { ...stored.response, status: item.status },
      inputItems: stored.inputItems,
      context: stored.context,
      ...(typeof item.provider === "string" ? { provider: item.provider } : {}),
      native: item.native === true,
      ...(typeof item.target === "string" ? { target: item.target } : {}),
    };
  }

  /** Writes the JSON under a fresh key: a status change never overwrites the blob a reader may be reading. */
  async #writeBlob(owner: ResponseOwner, id: string, entry: StoredResponse): Promise<string> {
    const key = `${this.#blobPrefix(owner, id)}${newId("v", this.#now())}.json`;
    const json = JSON.stringify({ response: entry.response, inputItems: entry.inputItems, context: entry.context });
    await this.#blobs.put(key, json, { contentType: "application/json" });
    return key;
  }

  #blobPrefix(owner: ResponseOwner, id: string): string {
    const workspace = workspaceOf(owner) || "_";
    return `${RESPONSES_BLOB_PREFIX}${encodeURIComponent(owner.organisationId)}/${encodeURIComponent(workspace)}/${id}/`;
  }
}

const storesInUse = new WeakMap<object, ResponseStore>();

/** The process's response store over the platform's Records and Blobs (one per Stores object). */
export function responseStoreOf(services: Pick<Services, "stores" | "settings">): ResponseStore {
  let store = storesInUse.get(services.stores);
  if (!store) {
    store = new ResponseStore(services.stores.records, services.stores.blobs, {
      retentionDays: services.settings.GATEWAY_RESPONSES_RETENTION_DAYS,
    });
    storesInUse.set(services.stores, store);
  }
  return store;
}
