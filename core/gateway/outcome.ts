import type { ChatUsage, RouteKind } from "../providers/types.ts";
import type { Cost } from "../catalog/cost.ts";

/**
 * What happened to one inference request: filled in by the pipeline as it goes, read afterwards by logging,
 * usage limits and analytics. For streams it is complete only when the stream ends (`done` resolves).
 */
export interface InferenceOutcome {
  route: RouteKind;
  provider?: string;
  /** The model the client asked for, and the one the provider says answered. */
  requestedModel: string;
  answeredModel?: string;
  status?: number;
  usage?: ChatUsage;
  /** True when usage was counted by the gateway because the provider did not report it. */
  usageEstimated?: boolean;
  cost?: Cost;
  stream: boolean;
  /** ms from request start to the upstream's first byte / first streamed chunk, and to the end. */
  upstreamFirstByteMs?: number;
  totalMs?: number;
  error?: { status: number; message: string; code: string | null };
  /** Resolves when the answer is complete (at once for JSON; at end of stream for SSE). */
  done: Promise<void>;
}

export function newOutcome(
  route: RouteKind,
  requestedModel: string,
  stream: boolean,
): InferenceOutcome & { finish(): void } {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => {
    finish = resolve;
  });
  return { route, requestedModel, stream, done, finish };
}
