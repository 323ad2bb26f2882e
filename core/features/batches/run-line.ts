import { randomUUID } from "node:crypto";
import { replayRequest } from "../../inference/gateway/deferred-request.ts";
import { toHttpError } from "../../http/app.ts";
import { METADATA_LIMITS } from "../../http/gateway-headers.ts";
import { errorResponse } from "../../http/errors.ts";
import { logRequest } from "../../observe/logs/log-request.ts";
import type { Services } from "../../services.ts";
import { MAX_RECEIVES, StoreUnavailableError } from "../../store/ports.ts";
import { type BatchRecord, type BatchStore, TERMINAL_STATUSES, batchStoreOf } from "./batch-store.ts";
import { endpointHandler } from "./endpoints.ts";
import type { LineMessage } from "./messages.ts";
import { ensureCounted, newRequestLineId, settleLine } from "./progress.ts";
import type { BatchResultLine } from "./types.ts";

/**
 * A `line` message (gateway mode): runs one input line through its route's handler, as the client's own request
 * would run (the create call's principal and routing headers: configs, fallbacks, policies, guardrails, cache,
 * cost), logs it as the app logs a request, and settles the line once. A line of a batch being cancelled or
 * expiring settles as skipped without running. Throws only for transient faults (the queue delivers it again);
 * on the message's last receive such a fault settles the line as failed instead, so every line settles.
 */
export async function runLineMessage(message: LineMessage, attempts: number, services: Services): Promise<void> {
  const store = batchStoreOf(services.stores.records);
  const record = await store.get(message.owner, message.batchId);
  if (record?.mode !== "gateway" || TERMINAL_STATUSES.has(record.batch.status)) return;
  if (await store.getResult(record.batch.id, message.line)) {
    await ensureCounted(services, record, message.line);
    return;
  }
  const skip = skipReason(record);
  if (skip) {
    await settleLine(services, record, message.line, {
      id: newRequestLineId(),
      custom_id: message.customId,
      response: null,
      error: skip,
    });
    return;
  }
  // Another run has the line (a redelivery while the first worker still runs it): its result will settle it;
  // this delivery fails and comes back later, to find the result.
  const claim = await LineClaim.take(store, record.batch.id, message.line);
  if (!claim) throw new LineInProgressError(message);
  try {
    // The result may have been written between the first look and the claim (by a run that has just ended).
    if (await store.getResult(record.batch.id, message.line)) {
      await ensureCounted(services, record, message.line);
      return;
    }
    // Settled while the claim holds: another delivery sees the claim, then the result, never neither.
    await settleLine(services, record, message.line, await runLineOnce(record, message, attempts, services));
  } finally {
    await claim.release();
  }
}

/** The line's answer; a transient fault throws (the message comes back), except on its last receive. */
async function runLineOnce(
  record: BatchRecord,
  message: LineMessage,
  attempts: number,
  services: Services,
): Promise<BatchResultLine> {
  try {
    return await runLine(record, message, services);
  } catch (error) {
    if (attempts < MAX_RECEIVES) throw error;
    console.error(`batches: line ${message.line} of ${message.batchId} failed on its last attempt`, error);
    return {
      id: newRequestLineId(),
      custom_id: message.customId,
      response: null,
      error: { code: "line_failed", message: "The request could not be run; the gateway gave up after retrying." },
    };
  }
}

/**
 * A run's claim on a line (batch-store.ts claimLine), renewed while the run lasts: a worker that dies lets go
 * within LEASE_SECONDS, so the line's next delivery runs it.
 */
class LineClaim {
  static readonly LEASE_SECONDS = 30;
  readonly #timer: NodeJS.Timeout;
  readonly #release: () => Promise<void>;

  private constructor(store: BatchStore, batchId: string, line: number, owner: string) {
    this.#release = () => store.releaseLine(batchId, line, owner);
    this.#timer = setInterval(
      () => {
        store.renewLine(batchId, line, owner, LineClaim.LEASE_SECONDS).then(
          (held) => held || console.error(`batches: the claim on line ${line} of ${batchId} lapsed while it ran`),
          (error) => console.error(`batches: renewing the claim on line ${line} of ${batchId} failed`, error),
        );
      },
      (LineClaim.LEASE_SECONDS * 1000) / 3,
    );
    this.#timer.unref();
  }

  static async take(store: BatchStore, batchId: string, line: number): Promise<LineClaim | undefined> {
    const owner = randomUUID();
    if (!(await store.claimLine(batchId, line, owner, LineClaim.LEASE_SECONDS))) return undefined;
    return new LineClaim(store, batchId, line, owner);
  }

  async release(): Promise<void> {
    clearInterval(this.#timer);
    await this.#release().catch((error) => console.error("batches: releasing a line's claim failed", error));
  }
}

class LineInProgressError extends Error {
  constructor(message: LineMessage) {
    super(`line ${message.line} of ${message.batchId} is being run by another delivery`);
  }
}

function skipReason(record: BatchRecord): BatchResultLine["error"] | undefined {
  if (record.batch.status === "cancelling")
    return { code: "batch_cancelled", message: "The batch was cancelled before this request ran." };
  if (record.expiring) return { code: "batch_expired", message: "The batch expired before this request ran." };
  return undefined;
}

async function runLine(record: BatchRecord, message: LineMessage, services: Services): Promise<BatchResultLine> {
  const body = message.body ?? (await lineBody(message, services));
  const endpoint = record.batch.endpoint;
  const handler = await endpointHandler(endpoint);
  const replay = await replayRequest(record.request, services, {
    path: endpoint,
    body,
    signal: new AbortController().signal,
    traceId: randomUUID(),
  });
  const { request, ctx } = replay;
  // The line's log names its batch and line (as a native batch's result logs do), so a batch's cost is the sum
  // of the logs with its batch_id; the create call's own metadata comes first when it leaves no room.
  if (ctx.gateway) {
    const metadata = { ...ctx.gateway.metadata };
    for (const [key, value] of [
      ["batch_id", record.batch.id],
      ["custom_id", message.customId.slice(0, METADATA_LIMITS.valueLength)],
    ] as const) {
      if (Object.keys(metadata).length < METADATA_LIMITS.pairs && !(key in metadata)) metadata[key] = value;
    }
    ctx.gateway = { ...ctx.gateway, metadata };
  }
  let response: Response;
  try {
    response = await handler(request, ctx);
  } catch (error) {
    // The gateway's own storage failing is not the line's answer: the line is tried again.
    if (error instanceof StoreUnavailableError) throw error;
    response = errorResponse(toHttpError(error, ctx.traceId, ctx.signal));
  }
  const text = await response.text();
  // One log record per line, as the app writes one per request (core/http/app.ts).
  ctx.waitUntil(logRequest(request, response, { path: endpoint }, ctx));
  await replay.settled();
  let answer: unknown = text;
  try {
    answer = JSON.parse(text);
  } catch {
    // Not JSON (a provider's plain-text error): kept as text.
  }
  return {
    id: newRequestLineId(),
    custom_id: message.customId,
    response: { status_code: response.status, request_id: ctx.traceId, body: answer },
    error: null,
  };
}

async function lineBody(message: LineMessage, services: Services): Promise<Record<string, unknown>> {
  const blob = message.bodyBlob ? await services.stores.blobs.get(message.bodyBlob) : undefined;
  if (!blob) throw new Error(`the body of line ${message.line} is missing from Blobs`);
  return JSON.parse(await new Response(blob.body).text()) as Record<string, unknown>;
}
