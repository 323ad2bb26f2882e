/**
 * What a conversation lost on its way to a target that cannot take some of its items back (history.ts): counts by
 * kind, reported in the answer's `x-gateway-dropped-history` header (`thinking_signature=3,item_reference=1`).
 */
export type DroppedHistory = Record<string, number>;

export const DROPPED_HISTORY_HEADER = "x-gateway-dropped-history";

export function countDrop(dropped: DroppedHistory, kind: string, by = 1): void {
  dropped[kind] = (dropped[kind] ?? 0) + by;
}

/** The header's value: kinds in alphabetical order (the same history always reads the same); undefined when none. */
export function droppedHistoryHeader(dropped: DroppedHistory | undefined): string | undefined {
  if (!dropped) return undefined;
  const kinds = Object.keys(dropped)
    .filter((kind) => dropped[kind]! > 0)
    .sort();
  return kinds.length > 0 ? kinds.map((kind) => `${kind}=${dropped[kind]}`).join(",") : undefined;
}
