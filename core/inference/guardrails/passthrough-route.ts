import type { RouteKind } from "../../providers/types.ts";

/**
 * The inference route a pass-through JSON body is shaped like (chat's `messages`, completions' `prompt`): its
 * input guardrails run on it as on that route. Undefined for any other body.
 */
export function passthroughRouteOf(json: Record<string, unknown> | null | undefined): RouteKind | undefined {
  if (!json) return undefined;
  if (Array.isArray(json.messages)) return "chat";
  if (typeof json.prompt === "string" || Array.isArray(json.prompt)) return "completions";
  return undefined;
}
