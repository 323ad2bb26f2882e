import type { BilledUnits, ChatUsage, RouteKind } from "../providers/types.ts";
import type { Cost } from "../catalog/cost.ts";
import type { GuardrailVerdict } from "../guardrails/types.ts";

/** One call to one target, as the routing layer made it (retries are separate attempts). */
export interface AttemptRecord {
  /** Where the target sits in the config tree, e.g. `config.targets[1].targets[0]`. */
  path: string;
  provider: string;
  /** 0 for the first call to this target, 1 for its first retry, ... */
  retry: number;
  /** Upstream status, or 408 / 502 / 499 for timeouts, network failures and client aborts; 200 on success. */
  status: number;
  ms: number;
  error?: string;
}

/**
 * What happened to one inference request: filled in by the pipeline as it goes, read afterwards by logging,
 * usage limits and analytics. For streams it is complete only when the stream ends (`done` resolves).
 */
export interface InferenceOutcome {
  /** The inference route, or `passthrough` for the generic pass-through family. */
  route: RouteKind | "passthrough";
  provider?: string;
  /** Every upstream call made for this request, in order (fallbacks and retries included). */
  attempts?: AttemptRecord[];
  /** Retries of the target that answered last (x-gateway-retry-attempt-count). */
  retries?: number;
  /** Path of that target (x-gateway-last-used-option-index). */
  lastUsedOptionIndex?: string;
  /** x-gateway-cache-status (core/cache): HIT, SEMANTIC HIT, MISS, REFRESH or DISABLED. */
  cacheStatus?: string;
  /** A cache hit: what the answer cost when the provider made it (USD), saved by this hit. */
  cacheSavedCost?: number;
  /** Verdicts of the guardrails that ran (input, output, async when they finish): for the request log. */
  guardrails?: GuardrailVerdict[];
  /**
   * Guardrail work still running after the answer (async guardrails, a stream's output checks): resolves when
   * it has finished, each check bounded by its timeout. The request log waits for it (core/guardrails/phases.ts).
   */
  guardrailsDone?: Promise<void>;
  /** The model the client asked for, and the one the provider says answered. */
  requestedModel: string;
  answeredModel?: string;
  status?: number;
  /**
   * The status the client was answered with, when the gateway answered another than `status` (246: a guardrail
   * that does not deny failed): what the request log records. `status` stays the provider's (the cache reads it).
   */
  clientStatus?: number;
  usage?: ChatUsage;
  /** What a family billed by the unit used (images, seconds, characters, searches, pages). */
  units?: BilledUnits;
  /** True when usage was counted by the gateway because the provider did not report it. */
  usageEstimated?: boolean;
  cost?: Cost;
  stream: boolean;
  /** ms from request start to the upstream's first byte / first streamed chunk, and to the end. */
  upstreamFirstByteMs?: number;
  totalMs?: number;
  error?: { status: number; message: string; code: string | null };
  /** The (validated) request body and the answer, for the request log. Streams keep their chunks. */
  requestBody?: unknown;
  responseBody?: unknown;
  /**
   * Sizes of the request body as received and of a JSON answer as sent (characters), when known; for a stream,
   * the characters of all its chunks, at least the size of the answer assembled from them.
   */
  requestChars?: number;
  responseChars?: number;
  /** Resolves when the answer is complete (at once for JSON; at end of stream for SSE). */
  done: Promise<void>;
}

export function newOutcome(
  route: RouteKind | "passthrough",
  requestedModel: string,
  stream: boolean,
): InferenceOutcome & { finish(): void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { route, requestedModel, stream, done, finish };
}
