import type { StreamTransformer } from "../types.ts";
import { UpstreamError } from "../types.ts";

/**
 * The stream of a route the provider speaks natively in an event-typed format (OpenAI's Responses events):
 * each event's JSON passes as it is, parsed once so the pipeline can read usage and re-frame it as
 * `event: <type>`. `[DONE]`, which some OpenAI-compatible servers add, is not an event of these formats.
 */
export function typedEventTransformer(): StreamTransformer {
  return {
    push(event) {
      if (event.data === "[DONE]" || event.data === "") return [];
      let parsed: unknown;
      try {
        parsed = JSON.parse(event.data);
      } catch {
        throw new UpstreamError(502, "The provider's stream holds an event that is not JSON.", {
          code: "invalid_upstream_stream",
        });
      }
      if (typeof parsed !== "object" || parsed === null || typeof (parsed as { type?: unknown }).type !== "string") {
        throw new UpstreamError(502, "The provider's stream holds an event without a type.", {
          code: "invalid_upstream_stream",
        });
      }
      return [parsed];
    },
    end: () => [],
  };
}

/** Stream settings of a native event-typed route. */
export const TYPED_EVENTS_SSE = { framing: "sse", createTransformer: typedEventTransformer } as const;
