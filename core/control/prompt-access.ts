import type { Principal } from "../auth/principal.ts";
import type { Records } from "../store/ports.ts";
import { type PartialResource, type PromptResource, partialStore, promptStore } from "./prompt-records.ts";
import { boundWorkspace } from "./provider-credentials.ts";

/**
 * Which prompts and partials a caller may use (render, run, include): its own workspace's, or (for callers not
 * bound to a workspace) any of the organisation's. Another workspace's answers undefined, like an unknown one.
 * Sharing (a prompt or partial shared with other workspaces) widens this: the sharing service extends these two
 * functions, which the runtime (core/prompts) calls.
 */
export async function usablePrompt(
  records: Records,
  principal: Principal,
  idOrSlug: string,
): Promise<PromptResource | undefined> {
  const prompt = await promptStore(records).get(principal.organisationId, idOrSlug);
  return prompt && visible(principal, prompt.workspaceId) ? prompt : undefined;
}

export async function usablePartial(
  records: Records,
  principal: Principal,
  idOrSlug: string,
): Promise<PartialResource | undefined> {
  const partial = await partialStore(records).get(principal.organisationId, idOrSlug);
  return partial && visible(principal, partial.workspaceId) ? partial : undefined;
}

function visible(principal: Principal, workspaceId: string | undefined): boolean {
  const bound = boundWorkspace(principal);
  return !bound || !workspaceId || workspaceId === bound;
}
