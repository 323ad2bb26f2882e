/** Deepest nesting of objects and arrays accepted in a JSON body or config (GATEWAY_MAX_JSON_DEPTH). */
export const DEFAULT_MAX_JSON_DEPTH = 128;
let limit = DEFAULT_MAX_JSON_DEPTH;

/** Sets the process-wide nesting limit (from the settings, when services are created). */
export function setMaxJsonDepth(depth: number): void {
  limit = depth;
}

/** The process-wide nesting limit. */
export const maxJsonDepth = (): number => limit;

/**
 * Whether a parsed JSON value nests objects and arrays deeper than `limit`. Walked with an explicit stack, not
 * recursion (the depth is what is being checked), and in time linear in the number of values.
 */
export function nestsDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  const nodes: object[] = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>;
    const depth = depths.pop()!;
    if (depth > limit) return true;
    for (const key in node) {
      const child = node[key];
      if (typeof child === "object" && child !== null) {
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}

/** Whether a parsed value is within the process-wide nesting limit. */
export const withinJsonDepth = (value: unknown): boolean => !nestsDeeperThan(value, limit);

/**
 * Whether JSON text may nest deeper than the limit: only if it opens more objects and arrays than the limit.
 * Counting brackets (strings included, so it may say yes needlessly, never no wrongly) is a plain scan of the
 * text, where walking the parsed value visits every value: usual bodies skip the walk.
 */
export function textMayNestDeeperThanLimit(text: string): boolean {
  if (text.length <= limit * 2) return false;
  let opened = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // 0x7b `{`, 0x5b `[`
    if ((code === 0x7b || code === 0x5b) && ++opened > limit) return true;
  }
  return false;
}
