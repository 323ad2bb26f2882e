import { sha256Hex } from "../../../util/ids.ts";
import { UpstreamError } from "../../../providers/types.ts";
import type { BatchRequestCounts, BatchResultLine, BatchStatus } from "../types.ts";

/** Pieces every native adapter shares: result-line ids, error lines, terminal statuses. */

/** A stable id for a result line (the same on every read of the results, so a finalisation run twice agrees). */
export const resultLineId = (providerBatchId: string, customId: string) =>
  `batch_req_${sha256Hex(`${providerBatchId}\n${customId}`).slice(0, 24)}`;

/** A line that never got an HTTP answer (cancelled, expired, refused before submission). */
export function errorLine(providerBatchId: string, customId: string, code: string, message: string): BatchResultLine {
  return { id: resultLineId(providerBatchId, customId), custom_id: customId, response: null, error: { code, message } };
}

export const TERMINAL_STATUSES: ReadonlySet<BatchStatus> = new Set(["completed", "failed", "expired", "cancelled"]);

export const zeroCounts = (): BatchRequestCounts => ({ total: 0, completed: 0, failed: 0 });

/** A count from a provider (Azure sends null before it knows). */
export const count = (value: unknown): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0;

/** A line the translation to the provider's format refused (e.g. `n` > 1): never sent, answered 400. */
export interface RefusedLine {
  custom_id: string;
  code: string;
  message: string;
}

/** Most refused lines a batch keeps in its state (they answer as errors); more fail the submission. */
export const MAX_REFUSED_LINES = 1000;

/**
 * Notes a refused line in `refused` (the adapter's state details), or throws 400 `unsupported_lines` once there are
 * more than MAX_REFUSED_LINES of them.
 */
export function noteRefused(refused: RefusedLine[], line: RefusedLine, provider: string): void {
  if (refused.length >= MAX_REFUSED_LINES) {
    throw new UpstreamError(
      400,
      `More than ${MAX_REFUSED_LINES} lines cannot be sent to ${provider}: ${line.message}`,
      {
        code: "unsupported_lines",
      },
    );
  }
  refused.push(line);
}

/** The result lines of refused lines: a 400 answer each, in OpenAI's error shape. */
export function* refusedResults(
  providerBatchId: string,
  refused: readonly RefusedLine[] = [],
): Generator<BatchResultLine> {
  for (const line of refused) {
    const id = resultLineId(providerBatchId, line.custom_id);
    yield {
      id,
      custom_id: line.custom_id,
      response: {
        status_code: 400,
        request_id: id,
        body: { error: { message: line.message, type: "invalid_request_error", param: null, code: line.code } },
      },
      error: null,
    };
  }
}

/** Renamed custom_ids are remembered in the batch state (a small record): at most this many characters of them. */
const MAX_RENAMED_CHARS = 64 * 1024;

/**
 * The custom_ids a provider cannot carry, sent under another name: the names go into the batch's details, so
 * its results are answered under the caller's own ids; `refusal` answers a batch whose renames outgrow the record.
 */
export class RenamedIds {
  readonly #details: { renamed?: Record<string, string> };
  readonly #refusal: string;
  #chars = 0;

  constructor(details: { renamed?: Record<string, string> }, refusal: string) {
    this.#details = details;
    this.#refusal = refusal;
  }

  add(sent: string, original: string): void {
    this.#chars += sent.length + original.length;
    if (this.#chars > MAX_RENAMED_CHARS) {
      throw new UpstreamError(400, this.#refusal, { code: "invalid_custom_id", param: "custom_id" });
    }
    this.#details.renamed ??= {};
    this.#details.renamed[sent] = original;
  }
}
