import type { PassthroughEndpoint, ProviderTarget } from "../types.ts";
import { geminiApiBase } from "./api-base.ts";

/**
 * Pass-through to the Gemini API (https://ai.google.dev/api): `https://generativelanguage.googleapis.com/v1beta` (or
 * the custom host, its version segment kept) + the client's path (`/models/{m}:generateContent`,
 * `/models/{m}:streamGenerateContent?alt=sse`, `/cachedContents`...), the key in `x-goog-api-key`.
 */
export function googlePassthrough(target: ProviderTarget): PassthroughEndpoint {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.forwardHeaders ?? {})) headers[name.toLowerCase()] = value;
  if (target.apiKey) headers["x-goog-api-key"] = target.apiKey;
  return { baseUrl: geminiApiBase({ target }), headers };
}
