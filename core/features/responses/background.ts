import type { RequestContext } from "../../services.ts";
import { HttpError, badRequest, notFound } from "../../http/errors.ts";
import { UpstreamError } from "../../providers/types.ts";
import type { ResponseOwner } from "./owner.ts";
import { type ResponseStatus, type ResponseStore, type StoredResponse, responseStoreOf } from "./response-store.ts";

/**
 * Background responses (`background: true`): the create answers the `queued` response at once and the model runs
 * after the answer, under ctx.waitUntil; clients poll `GET /responses/{id}` and may cancel.
 *
 * Runs live in the process that accepted them. On AWS that is the same Lambda invocation (waitUntil keeps it alive
 * until the run ends), so a cancel that reaches another invocation cannot abort the run directly: it only marks
 * the record `cancelled`. The run notices in two ways: it polls its record while running and aborts itself when it
 * reads `cancelled`, and its final write is conditional on the status it started from, so a result that arrives
 * after a cancel is dropped and the response stays cancelled.
 */

/** Runs of this process by response id: a cancel here aborts the run at once. */
const running = new Map<string, AbortController>();

export interface BackgroundOptions {
  /** How often a run reads its record to learn of a cancel made elsewhere (ms). */
  cancelPollMs?: number;
}

const DEFAULT_CANCEL_POLL_MS = 2000;
const FINAL_STATUSES: readonly ResponseStatus[] = ["completed", "incomplete", "failed"];

/**
 * Stores `queued` (its response's status set to `queued`, `background: true`) and starts `run` after the answer.
 * `run` gets a signal aborted on cancel (or delete) and resolves to the final Response object; a status of
 * `incomplete` or `failed` in it is kept, anything else stores as `completed`. A thrown error stores `failed` with
 * `error: {code, message}`. Resolves to the stored queued response once it is stored.
 */
export async function startBackground(
  ctx: Pick<RequestContext, "services" | "waitUntil">,
  owner: ResponseOwner,
  queued: StoredResponse,
  run: (signal: AbortSignal) => Promise<Record<string, any>>,
  options: BackgroundOptions = {},
): Promise<StoredResponse> {
  const store = responseStoreOf(ctx.services);
  const entry: StoredResponse = { ...queued, response: { ...queued.response, status: "queued", background: true } };
  const id = String(entry.response.id);
  await store.save(owner, entry);
  // Registered before the answer leaves, so a cancel that follows it at once finds the run.
  const controller = new AbortController();
  running.set(id, controller);
  ctx.waitUntil(
    runToEnd(store, owner, id, controller, run, options.cancelPollMs ?? DEFAULT_CANCEL_POLL_MS).finally(() => {
      if (running.get(id) === controller) running.delete(id);
    }),
  );
  return entry;
}

async function runToEnd(
  store: ResponseStore,
  owner: ResponseOwner,
  id: string,
  controller: AbortController,
  run: (signal: AbortSignal) => Promise<Record<string, any>>,
  cancelPollMs: number,
): Promise<void> {
  const started = await store.setStatus(owner, id, "in_progress");
  if (!started?.applied) return; // cancelled or deleted before it began
  const stopWatching = watchForCancel(store, owner, id, controller, cancelPollMs);
  let status: ResponseStatus;
  let patch: Record<string, any>;
  try {
    const result = await run(controller.signal);
    status = FINAL_STATUSES.includes(result.status) ? result.status : "completed";
    // The run's answer, under the id and creation time the client was given with the queued response.
    patch = { ...result, background: true };
    delete patch.id;
    delete patch.created_at;
    if (status === "failed" && !result.error) patch.error = { code: "server_error", message: "The response failed." };
  } catch (error) {
    if (controller.signal.aborted) return; // the cancel (or delete) already wrote what the record says
    status = "failed";
    patch = { error: failureOf(error) };
  } finally {
    stopWatching();
  }
  if (controller.signal.aborted) return;
  // Conditional on the status read: a response cancelled meanwhile (from another process) is left cancelled.
  await store.setStatus(owner, id, status, patch);
}

/** Polls the record while the run lasts; aborts the run once the record is cancelled or gone. */
function watchForCancel(
  store: ResponseStore,
  owner: ResponseOwner,
  id: string,
  controller: AbortController,
  pollMs: number,
): () => void {
  let reading = false;
  const timer = setInterval(async () => {
    if (reading) return;
    reading = true;
    try {
      const status = await store.status(owner, id);
      if (status === undefined || status === "cancelled") controller.abort();
    } catch {
      // The store is unreachable for now: the final conditional write still protects the record.
    } finally {
      reading = false;
    }
  }, pollMs);
  timer.unref?.();
  return () => clearInterval(timer);
}

/** The Response `error` of a run that threw: a client-facing error keeps its code and message; a bug says nothing. */
function failureOf(error: unknown): { code: string; message: string } {
  if (error instanceof HttpError || error instanceof UpstreamError) {
    const code = error.code ?? (error.status === 429 ? "rate_limit_exceeded" : "server_error");
    return { code, message: error.message };
  }
  console.error("background response failed", error);
  return { code: "server_error", message: "The gateway failed while generating the response." };
}

/**
 * Cancels a background response that is queued or in progress (idempotent for a cancelled one) and answers the
 * stored response. 404 when unknown, 400 for a response that is not a background one or has finished.
 */
export async function cancelBackground(
  store: ResponseStore,
  owner: ResponseOwner,
  id: string,
): Promise<StoredResponse> {
  for (;;) {
    const entry = await store.get(owner, id);
    if (!entry) throw notFound(`Response with id '${id}' not found.`);
    if (entry.response.background !== true) throw badRequest("Cannot cancel a synchronous response.");
    const status = entry.response.status as ResponseStatus;
    if (status === "cancelled") return entry;
    if (status !== "queued" && status !== "in_progress") throw badRequest(`Cannot cancel a ${status} response.`);
    const change = await store.setStatus(owner, id, "cancelled");
    if (!change) throw notFound(`Response with id '${id}' not found.`);
    // Not applied: it finished (or was cancelled) between the read and the write; answer as for that status.
    if (!change.applied) continue;
    running.get(id)?.abort();
    return change.entry;
  }
}

/** Aborts this process's run of a response (after it was deleted); false when it does not run here. */
export function abortBackground(id: string): boolean {
  const controller = running.get(id);
  controller?.abort();
  return controller !== undefined;
}
