import type { ProviderTarget } from "../types.ts";

/**
 * Vertex AI's Provisioned Throughput switch, one of spec 5.2's Vertex header family: `dedicated` uses only the
 * project's Provisioned Throughput (a 429 past it), `shared` bypasses it for pay-as-you-go. A client sends the
 * header as Google documents it; the gateway passes it on to Vertex AI calls only (target.vertex.llmRequestType).
 */
export const VERTEX_REQUEST_TYPE_HEADER = "x-vertex-ai-llm-request-type";

export const VERTEX_REQUEST_TYPES = ["dedicated", "shared"] as const;

/** The header for the target's Vertex AI calls (none when the request did not choose). */
export function vertexRequestTypeHeaders(target: ProviderTarget): Record<string, string> {
  const type = target.vertex?.llmRequestType;
  return type ? { [VERTEX_REQUEST_TYPE_HEADER]: type } : {};
}
