import type { ResolvedPrompt } from "./resolve.ts";

/**
 * The metadata a prompt run is logged with (spec 5.3 names `_prompt`): `_prompt` (the prompt's id),
 * `_prompt_version`, `_prompt_label` (when a label chose the version). They come first, so analytics' per-request
 * pair limit always counts them, then the caller's pairs; a caller's own `_prompt*` keys are dropped, so a
 * request cannot attribute a run to another prompt. Analytics groups by `_prompt` (`/v1/analytics/groups/prompts`).
 */

export const PROMPT_METADATA_KEY = "_prompt";

export function promptMetadata(resolved: ResolvedPrompt, given: Record<string, string> = {}): Record<string, string> {
  const metadata: Record<string, string> = {
    [PROMPT_METADATA_KEY]: resolved.prompt.id,
    _prompt_version: String(resolved.version.version),
  };
  if (resolved.label) metadata._prompt_label = resolved.label.name;
  for (const [key, value] of Object.entries(given)) if (!key.startsWith(PROMPT_METADATA_KEY)) metadata[key] = value;
  return metadata;
}
