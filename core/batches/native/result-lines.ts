import { sha256Hex } from "../../ids.ts";
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
