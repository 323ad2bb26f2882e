import { type Blobs, ConditionFailedError, type RecordItem, type Records } from "../../../store/ports.ts";
import { newSecret } from "../../../util/ids.ts";

/**
 * MCP tasks (the `io.modelcontextprotocol/tasks` extension) kept in Records, so that a task started on one
 * instance (a Lambda's, a gateway process's) is polled and cancelled from any other: one item per task
 * (`MCPTASK#<org>` / task id) with its status, its owner (server, key, user: only the caller that started it
 * may read or cancel it), a cancel request the running instance watches for, and the final result or JSON-RPC
 * error. A result larger than INLINE_LIMIT goes to Blobs (an item has a size limit). Task ids are 256-bit
 * secrets (the extension lets servers treat them as bearer handles); the item expires with the task's TTL.
 *
 * The instance running a task says so every TASK_HEARTBEAT_MS (`aliveAt`). A working task not heard from for
 * STALE_AFTER_MS lost its instance (a crash, a restart, a Lambda's time limit): the first read after that records it
 * failed, so a caller polling it learns so instead of reading `working` until the TTL, and a late outcome from an
 * instance that was only stalled cannot change a status a caller has already read as final.
 */

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

export interface TaskOwner {
  serverId: string;
  workspaceId: string;
  keyId?: string;
  userId?: string;
}

export interface McpTask {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

const INLINE_LIMIT = 256 * 1024;
/** How often the instance running a task records that it still is (handlers.ts). */
export const TASK_HEARTBEAT_MS = 5_000;
/** Six heartbeats missed: the running instance is gone. */
const STALE_AFTER_MS = 30_000;
const LOST_MESSAGE = "The gateway instance running this task stopped before the task finished.";
const POLL_INTERVAL_MS = 1000;
const TERMINAL = new Set<TaskStatus>(["completed", "failed", "cancelled"]);

export const isTerminal = (status: TaskStatus) => TERMINAL.has(status);

export class McpTaskStore {
  private readonly records: Records;
  private readonly blobs: Blobs;
  private readonly now: () => number;

  constructor(records: Records, blobs: Blobs, options: { now?: () => number } = {}) {
    this.records = records;
    this.blobs = blobs;
    this.now = options.now ?? Date.now;
  }

  /** Creates a working task; written (and so readable everywhere) before its id is handed out. */
  async create(organisationId: string, owner: TaskOwner, ttlMs: number): Promise<McpTask> {
    const now = new Date(this.now());
    const task: McpTask = {
      taskId: newSecret("mcptask"),
      status: "working",
      createdAt: now.toISOString(),
      lastUpdatedAt: now.toISOString(),
      ttlMs,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    await this.records.put(
      {
        pk: partition(organisationId),
        sk: task.taskId,
        ...task,
        owner,
        aliveAt: now.getTime(),
        ttl: Math.ceil((now.getTime() + ttlMs) / 1000),
      },
      { exists: false },
    );
    return task;
  }

  /** The task if it exists and belongs to `owner`; another caller's task reads as absent. */
  async get(organisationId: string, taskId: string, owner: TaskOwner): Promise<McpTask | undefined> {
    const item = await this.records.get(partition(organisationId), taskId);
    if (!item || !sameOwner(item.owner as TaskOwner, owner)) return undefined;
    return this.#taskOf(organisationId, this.#isLost(item) ? await this.#recordLost(organisationId, item) : item);
  }

  /** Records that the calling instance still runs the task (a no-op once the task has ended). */
  async heartbeat(organisationId: string, taskId: string): Promise<void> {
    try {
      await this.records.update(
        partition(organisationId),
        taskId,
        { set: { aliveAt: this.now() } },
        { equals: { status: "working" } },
      );
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  }

  /** Asks the running instance to stop (it watches `cancelRequested`); false for an unknown task. */
  async requestCancel(organisationId: string, taskId: string, owner: TaskOwner): Promise<boolean> {
    const item = await this.records.get(partition(organisationId), taskId);
    if (!item || !sameOwner(item.owner as TaskOwner, owner)) return false;
    if (!isTerminal(item.status as TaskStatus))
      await this.records.update(partition(organisationId), taskId, { set: { cancelRequested: true } });
    return true;
  }

  async cancelRequested(organisationId: string, taskId: string): Promise<boolean> {
    return (await this.records.get(partition(organisationId), taskId))?.cancelRequested === true;
  }

  /**
   * The final state: a result, a JSON-RPC error, or cancelled. False when the task had already ended (recorded
   * lost while its instance stalled): a status a caller may have read as final is never changed.
   */
  async finish(
    organisationId: string,
    taskId: string,
    outcome: Pick<McpTask, "status" | "statusMessage" | "result" | "error">,
  ): Promise<boolean> {
    const set: Record<string, unknown> = { status: outcome.status, lastUpdatedAt: new Date(this.now()).toISOString() };
    if (outcome.statusMessage) set.statusMessage = outcome.statusMessage;
    if (outcome.error) set.error = outcome.error;
    if (outcome.result) {
      const text = JSON.stringify(outcome.result);
      if (Buffer.byteLength(text) <= INLINE_LIMIT) set.result = outcome.result;
      else {
        const key = blobKey(organisationId, taskId);
        await this.blobs.put(key, text, { contentType: "application/json" });
        set.resultBlob = key;
      }
    }
    try {
      await this.records.update(partition(organisationId), taskId, { set }, { equals: { status: "working" } });
      return true;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      if (set.resultBlob) await this.blobs.delete(set.resultBlob as string).catch(() => {});
      return false;
    }
  }

  #isLost(item: RecordItem): boolean {
    if (isTerminal(item.status as TaskStatus)) return false;
    // Tasks made before heartbeats existed count from their last update.
    const aliveAt = typeof item.aliveAt === "number" ? item.aliveAt : Date.parse(item.lastUpdatedAt as string);
    return this.now() - aliveAt > STALE_AFTER_MS;
  }

  /** Records a lost task failed, unless a heartbeat or its outcome got there first (then that is what it is). */
  async #recordLost(organisationId: string, item: RecordItem): Promise<RecordItem> {
    const error = { code: -32603, message: LOST_MESSAGE };
    const unchanged =
      typeof item.aliveAt === "number"
        ? { status: item.status, aliveAt: item.aliveAt }
        : { status: item.status, lastUpdatedAt: item.lastUpdatedAt };
    try {
      return await this.records.update(
        partition(organisationId),
        item.sk,
        {
          set: {
            status: "failed",
            statusMessage: LOST_MESSAGE,
            error,
            lastUpdatedAt: new Date(this.now()).toISOString(),
          },
        },
        { equals: unchanged },
      );
    } catch (failure) {
      if (!(failure instanceof ConditionFailedError)) throw failure;
      return (await this.records.get(partition(organisationId), item.sk)) ?? item;
    }
  }

  async #taskOf(organisationId: string, item: RecordItem): Promise<McpTask> {
    const task: McpTask = {
      taskId: item.sk,
      status: item.status as TaskStatus,
      createdAt: item.createdAt as string,
      lastUpdatedAt: item.lastUpdatedAt as string,
      ttlMs: item.ttlMs as number,
      pollIntervalMs: item.pollIntervalMs as number,
    };
    if (item.statusMessage) task.statusMessage = item.statusMessage as string;
    if (item.error) task.error = item.error as McpTask["error"];
    if (item.result) task.result = item.result as Record<string, unknown>;
    if (item.resultBlob) {
      const blob = await this.blobs.get(blobKey(organisationId, item.sk));
      if (blob) task.result = JSON.parse(await new Response(blob.body).text());
    }
    return task;
  }
}

const partition = (organisationId: string) => `MCPTASK#${organisationId}`;
const blobKey = (organisationId: string, taskId: string) => `mcp-tasks/${organisationId}/${taskId}.json`;

function sameOwner(stored: TaskOwner | undefined, caller: TaskOwner): boolean {
  return (
    stored !== undefined &&
    stored.serverId === caller.serverId &&
    stored.workspaceId === caller.workspaceId &&
    (stored.keyId ?? null) === (caller.keyId ?? null) &&
    (stored.userId ?? null) === (caller.userId ?? null)
  );
}
