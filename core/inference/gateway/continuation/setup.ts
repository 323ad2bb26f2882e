import type { PriceOverrides } from "../../catalog/price-override.ts";
import type { LeafNode } from "../../routing/config.ts";
import type { EngineIO, RoutingSuccess } from "../../routing/engine.ts";
import type { QueryContext } from "../../routing/query.ts";
import type { TrustedHosts } from "../../../security/custom-host.ts";
import type { ProviderTarget } from "../../../providers/types.ts";
import type { InferenceOutcome } from "../outcome.ts";
import type { ContinuableRoute } from "./partial.ts";

/** What the pipeline gives a continuation (offer.ts holds it; continue-stream.ts uses it). */

/** A leaf made ready for a call the way the request's own calls are (core/inference/gateway/inference.ts). */
export interface PreparedLeg {
  target: ProviderTarget;
  timeoutMs: number;
  /** The client's request in its route's shape, with the leaf's params applied and its input guardrails run. */
  body: Record<string, any>;
  prices?: PriceOverrides;
}

export interface ContinuationSetup {
  route: ContinuableRoute;
  /** The client's request, validated, in its route's shape. */
  body: Record<string, any>;
  outcome: InferenceOutcome & { finish(): void };
  requestId: string;
  /** When the request started (performance.now()): the answer's total time is counted from it. */
  startedAt: number;
  /** The client's signal: the continuation's calls end when it aborts. */
  signal: AbortSignal;
  trustedHosts?: TrustedHosts;
  /** The client asked for a usage chunk (chat's `stream_options.include_usage`). */
  includeUsage: boolean;
  queryContext(): QueryContext;
  prepare(leaf: LeafNode): Promise<PreparedLeg>;
}

/** What routing said once the request was answered: who answered, and who may continue. */
export interface ArmedContinuation {
  rest: (io: EngineIO) => Promise<RoutingSuccess>;
  from: { provider: string; target: string };
}
