import type { HandlerMap } from "../../http/context.ts";

/**
 * Saved prompts at run time: `POST /v1/prompts/:id/render` (the filled request, no model call) and
 * `POST /v1/prompts/:id/completions` (through the inference pipeline), `:id` carrying an optional version suffix
 * (`@latest`, `@<n>`, `@<label>`). The runtime (core/prompts/runtime.ts, with mustache) loads on first use.
 */

const runtime = () => import("../../prompts/runtime.ts");

export const handlers: HandlerMap = {
  async renderPrompt(request, ctx) {
    return (await runtime()).renderPromptRequest(request, ctx);
  },

  async promptCompletions(request, ctx) {
    return (await runtime()).promptCompletion(request, ctx);
  },

  /** The legacy `POST /v1/prompts/:id/generate` (the portkey-ai SDK's deprecated `generations.create`). */
  async generatePrompt(request, ctx) {
    return (await runtime()).promptGeneration(request, ctx);
  },
};
