import type { TransformContext } from "../types.ts";

/**
 * The client's body between buildRequest and transformResponse of one call (the answer's shape follows its
 * `response_format` and `timestamp_granularities`); keyed by the call's context, so nothing outlives the call.
 */
const bodies = new WeakMap<TransformContext, Record<string, any>>();

export function rememberBody(ctx: TransformContext, body: Record<string, any>): void {
  bodies.set(ctx, body);
}

export function bodyOf(ctx: TransformContext): Record<string, any> {
  return bodies.get(ctx) ?? {};
}
