import { HttpError } from "../../http/errors.ts";
import { UpstreamError } from "../../providers/types.ts";
import type { ConfigNode, LeafNode, StrategyNode } from "./config.ts";
import type { QueryContext } from "./query.ts";
import { nextRetryDelay, sleep } from "./retry.ts";

/**
 * The strategy engine: walks a compiled config tree and calls leaf targets through `io.call`, which resolves
 * once the upstream succeeded (a JSON body, or a stream's first chunk) and throws UpstreamError before that.
 * So a fallback never moves on after bytes reached the client.
 *
 * - single: the first target.
 * - fallback: targets in order; moves on when the failure's status is in `on_status_codes` (default: any
 *   failure), and always on transport failures (network error, timeout, stream error before the first chunk).
 *   A client that went away (499) stops everything.
 * - loadbalance: one target by weighted random choice (weight 0 is never chosen).
 * - conditional: the first condition whose query holds names the target, else `default`.
 * - retries: per leaf, on its policy's status codes, with backoff or the provider's retry-after hint.
 * - continuation: a fallback with `on_stream_failure: "continue"` hands back, with its success, the targets after
 *   the one that answered (`rest`), which a stream that breaks later asks to finish the answer (through an `io`
 *   of its own: the request it sends is not the client's).
 * Route-independent: inference and pass-through use it with their own `call`.
 */
export interface EngineIO {
  /**
   * One call to a leaf (`retry` 0 for the first call). Throws UpstreamError on upstream failure, HttpError to
   * end the request (the client's mistake); anything else is a failure inside the gateway (gatewayTargetError).
   */
  call(leaf: LeafNode, retry: number): Promise<Response>;
  /** The request seen by conditional queries; built on first use. */
  queryContext(): QueryContext;
  /** The client's signal: aborting it ends retry waits at once. */
  signal: AbortSignal;
  /**
   * Affinity: whether a leaf is where the request's conversation lives (a Responses chain on one integration).
   * Fallbacks try such a target first and loadbalances choose it; conditions are never overridden.
   */
  prefers?(leaf: LeafNode): Promise<boolean>;
  /** Injected in tests. */
  random?: () => number;
}

export interface RoutingSuccess {
  response: Response;
  leaf: LeafNode;
  /** Retries made on that leaf before it answered. */
  retries: number;
  /**
   * Set when a fallback that continues broken streams holds targets after this one (in this fallback or in one
   * around it that continues too): runs them in order, as the fallback would have, with `io`.
   */
  rest?: (io: EngineIO) => Promise<RoutingSuccess>;
}

/** The last failure once the strategy has nothing left to try. */
export class RoutingFailure extends Error {
  readonly error: UpstreamError;
  readonly leaf: LeafNode;
  readonly retries: number;
  constructor(error: UpstreamError, leaf: LeafNode, retries: number) {
    super(error.message);
    this.name = "RoutingFailure";
    this.error = error;
    this.leaf = leaf;
    this.retries = retries;
  }
}

export function runStrategy(root: ConfigNode, io: EngineIO): Promise<RoutingSuccess> {
  let context: QueryContext | undefined;
  const state = { io, random: io.random ?? Math.random, context: () => (context ??= io.queryContext()) };
  return run(root, state);
}

interface RunState {
  io: EngineIO;
  random: () => number;
  context(): QueryContext;
}

async function run(node: ConfigNode, state: RunState): Promise<RoutingSuccess> {
  if (node.kind === "leaf") return runLeaf(node, state);
  switch (node.mode) {
    case "single":
      return run(node.targets[0]!, state);
    case "fallback":
      return runFallback(node, state);
    case "loadbalance": {
      const preferred = await preferredTarget(node, state.io);
      if (preferred !== undefined) return run(node.targets[preferred]!, state);
      return run(
        node.targets[
          pickWeighted(
            node.targets.map((target) => target.weight),
            state.random,
          )
        ]!,
        state,
      );
    }
    case "conditional":
      return run(node.targets[conditionalTarget(node, state.context())]!, state);
  }
}

async function runFallback(node: StrategyNode, state: RunState): Promise<RoutingSuccess> {
  // Affinity: the target where the conversation lives goes first, the others keep their order after it.
  const order = node.targets.map((_, index) => index);
  const preferred = await preferredTarget(node, state.io);
  if (preferred !== undefined) order.unshift(...order.splice(preferred, 1));
  return runFallbackIn(node, order, state, 0);
}

/** The fallback's targets in `order`, from position `from` on. */
async function runFallbackIn(
  node: StrategyNode,
  order: readonly number[],
  state: RunState,
  from: number,
): Promise<RoutingSuccess> {
  let last: RoutingFailure | undefined;
  for (let position = from; position < order.length; position++) {
    try {
      const success = await run(node.targets[order[position]!]!, state);
      if (node.continuesStreams && position + 1 < order.length) {
        const after = (io: EngineIO) => runFallbackIn(node, order, { ...state, io }, position + 1);
        success.rest = success.rest ? thenRest(success.rest, after, node.onStatusCodes) : after;
      }
      return success;
    } catch (error) {
      if (!(error instanceof RoutingFailure)) throw error;
      last = error;
      if (!movesOn(error.error, node.onStatusCodes) || state.io.signal.aborted) throw error;
    }
  }
  throw last!;
}

/** The index of the first target that holds a leaf the io prefers (affinity), if any. */
async function preferredTarget(node: StrategyNode, io: EngineIO): Promise<number | undefined> {
  if (!io.prefers) return undefined;
  for (const [index, target] of node.targets.entries()) {
    if (target.weight <= 0 && node.mode === "loadbalance") continue;
    if (await holdsPreferred(target, io.prefers)) return index;
  }
  return undefined;
}

async function holdsPreferred(node: ConfigNode, prefers: (leaf: LeafNode) => Promise<boolean>): Promise<boolean> {
  if (node.kind === "leaf") return prefers(node).catch(() => false);
  for (const target of node.targets) if (await holdsPreferred(target, prefers)) return true;
  return false;
}

/**
 * The rest of an inner fallback, then (when all of it failed, or for the success it gives later) the rest of
 * the fallback around it.
 */
function thenRest(
  inner: (io: EngineIO) => Promise<RoutingSuccess>,
  outer: (io: EngineIO) => Promise<RoutingSuccess>,
  outerStatusCodes: ReadonlySet<number> | undefined,
): (io: EngineIO) => Promise<RoutingSuccess> {
  return async (io) => {
    let success: RoutingSuccess;
    try {
      success = await inner(io);
    } catch (error) {
      if (!(error instanceof RoutingFailure) || !movesOn(error.error, outerStatusCodes) || io.signal.aborted)
        throw error;
      return outer(io);
    }
    success.rest = success.rest ? thenRest(success.rest, outer, outerStatusCodes) : outer;
    return success;
  };
}

/** Does a fallback move on from this failure? */
export function movesOn(error: UpstreamError, onStatusCodes: ReadonlySet<number> | undefined): boolean {
  if (error.status === 499) return false;
  if (error.transport) return true;
  return onStatusCodes ? onStatusCodes.has(error.status) : true;
}

async function runLeaf(leaf: LeafNode, state: RunState): Promise<RoutingSuccess> {
  const { io } = state;
  let waited = 0;
  for (let retry = 0; ; retry++) {
    try {
      return { response: await io.call(leaf, retry), leaf, retries: retry };
    } catch (thrown) {
      // The client's own mistakes (a bad config, a rate limit) end the request as they are.
      if (thrown instanceof HttpError) throw thrown;
      const error =
        thrown instanceof UpstreamError ? thrown : io.signal.aborted ? clientClosed() : gatewayTargetError(thrown);
      if (error.status === 499 || io.signal.aborted) throw new RoutingFailure(error, leaf, retry);
      const delay = nextRetryDelay(leaf.settings.retry, retry + 1, error.status, error.headers, waited, state.random);
      if (delay === undefined) throw new RoutingFailure(error, leaf, retry);
      try {
        await sleep(delay, io.signal);
      } catch {
        throw new RoutingFailure(clientClosed(), leaf, retry);
      }
      waited += delay;
    }
  }
}

const clientClosed = () => new UpstreamError(499, "The client closed the request.", { code: "client_closed_request" });

/**
 * A target that failed inside the gateway (a transform, a signer, a credential lookup threw) is a failed
 * target like one whose network failed: 502, and a fallback always moves on. The message names the error
 * without what it quotes (a JSON parser quotes the text it read, which may be a credential); the server's log
 * gets the stack, once per error.
 */
export function gatewayTargetError(error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const name = error instanceof Error ? error.name : typeof error;
  const detail = (error instanceof Error ? error.message : String(error))
    .replace(/"(?:[^"\\]|\\.)*"?/g, '"…"')
    .slice(0, 200);
  const converted = new UpstreamError(502, `The gateway failed while calling the provider: ${name}: ${detail}`, {
    type: "server_error",
    code: "gateway_target_error",
    transport: true,
  });
  const logged = typeof error === "object" && error !== null && LOGGED.has(error);
  if (!logged) {
    if (typeof error === "object" && error !== null) LOGGED.add(error);
    const frames = error instanceof Error ? (error.stack ?? "").split("\n").slice(1).join("\n") : "";
    console.error(`target failed inside the gateway: ${name}: ${detail}\n${frames}`);
  }
  return converted;
}

const LOGGED = new WeakSet<object>();

/** Index of a target chosen with probability weight / sum of weights (weights <= 0 are never chosen). */
export function pickWeighted(weights: readonly number[], random: () => number = Math.random): number {
  let total = 0;
  for (const weight of weights) if (weight > 0) total += weight;
  if (total <= 0) throw new HttpError(400, "No loadbalance target has a weight above 0.", { code: "invalid_config" });
  let point = random() * total;
  let chosen = -1;
  for (const [index, weight] of weights.entries()) {
    if (weight <= 0) continue;
    chosen = index;
    point -= weight;
    if (point < 0) return index;
  }
  return chosen; // rounding at the top end
}

/** The conditional target for a request: first matching condition, else the default. */
export function conditionalTarget(node: StrategyNode, context: QueryContext): number {
  for (const condition of node.conditions ?? []) if (condition.test(context)) return condition.then;
  if (node.defaultTarget !== undefined) return node.defaultTarget;
  throw new HttpError(
    400,
    `No condition of the conditional strategy at ${node.path} matched the request, and it has no default target.`,
    {
      code: "no_matching_target",
      param: "x-gateway-config",
    },
  );
}
