import type { Principal } from "../../auth/principal.ts";
import type { Records } from "../../store/ports.ts";
import { type PartialResource, type PromptResource, partialStore, promptStore } from "./store.ts";
import { reaches } from "./places.ts";

/**
 * Which prompts and partials a caller may use (render, run, include): its own workspace's, those shared with its
 * workspace (core/control/prompts/sharing.ts), or (for callers not bound to a workspace) any of the
 * organisation's. Another workspace's answers undefined, like an unknown one. The runtime (core/features/prompts) calls
 * these two functions.
 */
export async function usablePrompt(
  records: Records,
  principal: Principal,
  idOrSlug: string,
): Promise<PromptResource | undefined> {
  const prompt = await promptStore(records).get(principal.organisationId, idOrSlug);
  return prompt && reaches(principal, prompt) ? prompt : undefined;
}

export async function usablePartial(
  records: Records,
  principal: Principal,
  idOrSlug: string,
): Promise<PartialResource | undefined> {
  const partial = await partialStore(records).get(principal.organisationId, idOrSlug);
  return partial && reaches(principal, partial) ? partial : undefined;
}
