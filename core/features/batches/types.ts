import type { ResourceOwner } from "../../auth/resource-owner.ts";
import type { DeferredRequest } from "../../inference/gateway/deferred-request.ts";
import type { StoredFile } from "../files/types.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";

/**
 * Batches (spec 2.6, 3; OpenAI's Batch API) on any provider. Two modes:
 * - `native`: the lines go to the provider's own batch API (core/features/batches/native/*), which a scheduled task polls;
 *   its results are translated into OpenAI's output JSONL;
 * - `gateway`: the gateway runs every line itself through the normal pipeline, fanned out over the `batches`
 *   queue (core/features/batches/gateway-run/*).
 */

export const BATCH_STATUSES = [
  "validating",
  "failed",
  "in_progress",
  "finalizing",
  "completed",
  "expired",
  "cancelling",
  "cancelled",
] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** The inference routes a batch may target (the gateway's own; `url` of every line must equal it). */
export const BATCH_ENDPOINTS = [
  "/v1/chat/completions",
  "/v1/completions",
  "/v1/embeddings",
  "/v1/responses",
  "/v1/messages",
] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];

export type BatchMode = "native" | "gateway";

/** One entry of `errors.data[]` (spec 2.6, 7). */
export interface BatchError {
  code: string;
  message: string;
  param: string | null;
  /** 1-based line of the input file, or null when the error is not about one line. */
  line: number | null;
}

export interface BatchRequestCounts {
  total: number;
  completed: number;
  failed: number;
}

/** The Batch object of spec 2.6, as clients see it. */
export interface BatchObject {
  id: string;
  object: "batch";
  endpoint: BatchEndpoint;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  created_at: number;
  errors: { object: "list"; data: BatchError[] } | null;
  output_file_id: string | null;
  error_file_id: string | null;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: BatchRequestCounts;
  metadata: Record<string, string> | null;
  /** The model of the lines when they all name one (OpenAI sends it), else null. */
  model?: string | null;
}

/** One line of a batch input file, validated. */
export interface BatchInputLine {
  /** 1-based line number in the input file. */
  line: number;
  custom_id: string;
  method: "POST";
  url: BatchEndpoint;
  body: Record<string, any>;
}

/** One line of a batch output (or error) file, in OpenAI's shape. */
export interface BatchResultLine {
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: unknown } | null;
  error: { code: string; message: string } | null;
}

/** A provider's batch as a poll sees it, in the gateway's terms. */
export interface NativeBatchState {
  status: BatchStatus;
  request_counts?: BatchRequestCounts;
  errors?: BatchError[];
  /** Provider details the adapter needs later (its output file id, result URL, job ARN...); JSON, no secrets. */
  details?: Record<string, unknown>;
}

/** What a native adapter may use to reach the provider. Calls go through the guarded upstream client. */
export interface NativeBatchContext {
  target: ProviderTarget;
  trustedHosts: TrustedHosts;
  signal: AbortSignal;
  /** REQUEST_TIMEOUT, per provider call. */
  timeoutMs: number;
}

export interface NativeSubmission {
  batchId: string;
  endpoint: BatchEndpoint;
  completionWindow: string;
  metadata: Record<string, string> | null;
  inputFile: StoredFile;
  /** The validated lines, read again from the input file on each call. */
  lines(): AsyncIterable<BatchInputLine>;
  /** The input file's bytes, as uploaded. */
  content(): Promise<ReadableStream<Uint8Array>>;
}

/**
 * A provider's own batch API (OpenAI and Azure OpenAI batches, Anthropic message batches, ...). Adapters are pure
 * of gateway state: the engine (core/features/batches) keeps the record, writes the files and the logs.
 */
export interface NativeBatchApi {
  /** Whether `target` can run `endpoint` natively (else the batch runs in the gateway). */
  supports(target: ProviderTarget, endpoint: BatchEndpoint): boolean;
  submit(
    submission: NativeSubmission,
    ctx: NativeBatchContext,
  ): Promise<{ providerBatchId: string; providerFileId?: string; state: NativeBatchState }>;
  poll(providerBatchId: string, previous: NativeBatchState, ctx: NativeBatchContext): Promise<NativeBatchState>;
  /** The finished batch's results (successes and failures), as OpenAI output lines, in any order. */
  results(providerBatchId: string, state: NativeBatchState, ctx: NativeBatchContext): AsyncIterable<BatchResultLine>;
  cancel(providerBatchId: string, state: NativeBatchState, ctx: NativeBatchContext): Promise<void>;
}

/** What the gateway keeps about a batch besides the Batch object. */
export interface StoredBatch {
  batch: BatchObject;
  owner: ResourceOwner;
  mode: BatchMode;
  /** Who created it and the routing headers of the create call (sealed): what its lines run with. */
  request: DeferredRequest;
  /** Native mode: the provider and its batch. */
  native?: { provider: string; providerBatchId: string; providerFileId?: string; state: NativeBatchState };
}
