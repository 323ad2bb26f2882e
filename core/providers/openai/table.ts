import type { CompatibleProvider } from "./compatible.ts";

/**
 * OpenAI and every provider whose API is OpenAI-compatible: one row each. Quirks (unsupported params,
 * missing stream_options) live in the row, not in code.
 */
export const COMPATIBLE_PROVIDERS: CompatibleProvider[] = [
  {
    id: "openai",
    name: "OpenAI",
    baseUrl: "https://api.openai.com/v1",
    auth: "bearer",
    routes: ["chat", "completions", "embeddings", "models"],
    docs: "https://platform.openai.com/docs/api-reference",
  },
];
