import type { Server, ServerContext } from "@modelcontextprotocol/server";
import * as z from "zod";
import { type McpTask, type McpTaskStore, TASK_HEARTBEAT_MS, type TaskOwner, isTerminal } from "./store.ts";

/**
 * The gateway as a server of the MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a tool call
 * from a caller that declared the extension, still running after MCP_TASK_AFTER_MS, is answered with a task
 * (`resultType: "task"`) while the call goes on in the background; its outcome is kept in Records
 * (store.ts). `tasks/get`, `tasks/cancel` and `tasks/update` work from any instance: a cancel is recorded, and
 * the instance running the call watches for it and aborts the upstream request (closing it is MCP's
 * cancellation). The gateway never needs client input mid-task, so `tasks/update` only acknowledges.
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
const CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities";
const WATCH_INTERVAL_MS = 250;

type Result = Record<string, unknown>;

export interface TaskHooks {
  /** Runs a tool call, answering a task instead when it outlasts the threshold (and the caller allows it). */
  runAsTask(ctx: ServerContext, name: string, call: (signal: AbortSignal) => Promise<Result>): Promise<Result>;
  tasks: TaskContext;
}

export interface TaskContext {
  store: McpTaskStore;
  organisationId: string;
  owner: TaskOwner;
  afterMs: number;
  ttlMs: number;
  /** Keeps background work (the task's call) alive past the answer; the request's cleanup waits for it. */
  background(work: Promise<unknown>): void;
}

/** Whether the request's client declared the extension (2026-07-28 per-request capabilities). */
export function declaresTasks(ctx: ServerContext): boolean {
  // The SDK lifts the per-request envelope out of `_meta` into `envelope`, under the same keys.
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = (envelope?.[CAPABILITIES_KEY] ?? ctx.mcpReq._meta?.[CAPABILITIES_KEY]) as
    | { extensions?: Record<string, unknown> }
    | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

export function taskRunner(context: TaskContext): TaskHooks["runAsTask"] {
  return async (ctx, _name, call) => {
    if (!declaresTasks(ctx)) return call(ctx.mcpReq.signal);
    const controller = new AbortController();
    let handedOff = false;
    // Before the task exists, the caller closing its stream cancels the call; after, only tasks/cancel does.
    ctx.mcpReq.signal.addEventListener("abort", () => handedOff || controller.abort(ctx.mcpReq.signal.reason), {
      once: true,
    });
    const running = call(controller.signal);
    const settled = running.then(
      () => true,
      () => true,
    );
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), context.afterMs);
    });
    const finished = await Promise.race([settled, late]);
    clearTimeout(timer);
    if (finished) return running;
    handedOff = true;
    const task = await context.store.create(context.organisationId, context.owner, context.ttlMs);
    context.background(settleTask(context, task.taskId, running, controller));
    return { resultType: "task", ...wireTask(task) };
  };
}

/** Waits for the call, aborting it when a cancel is recorded, and stores how it ended. */
async function settleTask(
  context: TaskContext,
  taskId: string,
  running: Promise<Result>,
  controller: AbortController,
): Promise<void> {
  const { store, organisationId } = context;
  let cancelled = false;
  const watch = setInterval(() => {
    void store.cancelRequested(organisationId, taskId).then(
      (requested) => {
        if (!requested || cancelled) return;
        cancelled = true;
        controller.abort(new Error("The task was cancelled."));
      },
      () => {},
    );
  }, WATCH_INTERVAL_MS);
  // Without it, a reader takes the task for lost (store.ts).
  const heartbeat = setInterval(() => {
    void store.heartbeat(organisationId, taskId).catch(() => {});
  }, TASK_HEARTBEAT_MS);
  try {
    const result = await running;
    await store.finish(organisationId, taskId, { status: "completed", result });
  } catch (error) {
    if (cancelled) await store.finish(organisationId, taskId, { status: "cancelled", statusMessage: "Cancelled." });
    else {
      const failure = rpcErrorOf(error);
      await store.finish(organisationId, taskId, { status: "failed", statusMessage: failure.message, error: failure });
    }
  } finally {
    clearInterval(watch);
    clearInterval(heartbeat);
  }
}

function rpcErrorOf(error: unknown): NonNullable<McpTask["error"]> {
  const { code, message, data } = error as { code?: unknown; message?: string; data?: unknown };
  return {
    code: typeof code === "number" ? code : -32603,
    message: (message ?? String(error)).slice(0, 1000),
    ...(data !== undefined ? { data } : {}),
  };
}

/** A task as the wire has it: inline result or error only once terminal. */
function wireTask(task: McpTask): Result {
  const { result, error, ...rest } = task;
  return {
    ...rest,
    ...(task.status === "completed" && result ? { result } : {}),
    ...(task.status === "failed" && error ? { error } : {}),
  };
}

// Loose on purpose: a caller without the extension is told so (-32021) before its params are judged (-32602).
const taskParams = z.looseObject({ taskId: z.unknown().optional(), inputResponses: z.unknown().optional() });
const taskIdOf = async (params: { taskId?: unknown }) => {
  if (typeof params.taskId === "string" && params.taskId.length > 0 && params.taskId.length <= 200)
    return params.taskId;
  throw await protocolError(-32602, "Invalid params: `taskId` must be a task id string.");
};

export function registerTaskHandlers(server: Server, hooks: TaskHooks): void {
  const load = async (params: { taskId?: unknown }, ctx: ServerContext) => {
    await requireExtension(ctx);
    const taskId = await taskIdOf(params);
    const task = await hooks.tasks.store.get(hooks.tasks.organisationId, taskId, hooks.tasks.owner);
    if (!task) throw await protocolError(-32602, "Failed to retrieve task: Task not found");
    return task;
  };
  server.setRequestHandler("tasks/get", { params: taskParams }, async (params, ctx) => ({
    resultType: "complete",
    ...wireTask(await load(params, ctx)),
  }));
  server.setRequestHandler("tasks/cancel", { params: taskParams }, async (params, ctx) => {
    const task = await load(params, ctx);
    if (!isTerminal(task.status))
      await hooks.tasks.store.requestCancel(hooks.tasks.organisationId, task.taskId, hooks.tasks.owner);
    return { resultType: "complete" };
  });
  // The gateway's tasks never wait for input: responses to keys never issued are ignored, as the extension says.
  server.setRequestHandler("tasks/update", { params: taskParams }, async (params, ctx) => {
    await load(params, ctx);
    if (typeof params.inputResponses !== "object" || params.inputResponses === null)
      throw await protocolError(-32602, "Invalid params: `inputResponses` must be an object.");
    return { resultType: "complete" };
  });
}

async function requireExtension(ctx: ServerContext): Promise<void> {
  if (declaresTasks(ctx)) return;
  throw await protocolError(-32021, "Missing required client capability", {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

async function protocolError(code: number, message: string, data?: unknown): Promise<Error> {
  const { ProtocolError } = await import("@modelcontextprotocol/server");
  return new ProtocolError(code, message, data);
}
