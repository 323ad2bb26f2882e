import type { Principal } from "../../auth/principal.ts";
import { usablePrompt } from "../../control/prompts/access.ts";
import {
  type LabelResource,
  type PromptResource,
  type PromptVersionRecord,
  labelStore,
  readPromptVersion,
} from "../../control/prompts/store.ts";
import { badRequest, notFound } from "../../http/errors.ts";
import type { Records } from "../../store/ports.ts";

/**
 * Which version of which prompt a path's `promptId` names (spec 4.4): `<id or slug>` the published version,
 * `@latest` the newest, `@<n>` version n, `@<label>` the version a label (by name or id) points at. An unknown
 * prompt (or another workspace's) answers 404 `prompt_not_found`, an unknown version `version_not_found`, a
 * label that does not exist or points at no version of this prompt `label_not_found`.
 */

export interface ResolvedPrompt {
  prompt: PromptResource;
  version: PromptVersionRecord;
  /** The label the reference named, if it named one. */
  label?: LabelResource;
}

/** The most labels an organisation's lookup by name reads. */
const LABEL_SCAN_LIMIT = 1000;

export async function resolvePrompt(
  records: Records,
  principal: Principal,
  reference: string,
): Promise<ResolvedPrompt> {
  const at = reference.lastIndexOf("@");
  const idOrSlug = at > 0 ? reference.slice(0, at) : reference;
  const selector = at > 0 ? reference.slice(at + 1) : undefined;
  if (selector === "") throw badRequest(`'${reference}' names no version after '@'.`, "promptId", "invalid_value");

  const prompt = await usablePrompt(records, principal, idOrSlug);
  if (!prompt) throw notFound(`No prompt '${idOrSlug}' that this key may use.`, "prompt_not_found");

  let number: number;
  let label: LabelResource | undefined;
  if (selector === undefined) number = prompt.defaultVersion;
  else if (selector === "latest") number = prompt.latestVersion;
  else if (/^\d{1,9}$/.test(selector)) number = Number(selector);
  else {
    label = await labelOf(records, prompt, selector);
    number = prompt.labels[label.id]!;
  }
  const version = number >= 1 ? await readPromptVersion(records, prompt.id, number) : undefined;
  if (!version) throw notFound(`The prompt '${idOrSlug}' has no version ${selector ?? number}.`, "version_not_found");
  return { prompt, version, label };
}

/** The label (by id, slug or name) that points at a version of this prompt. */
async function labelOf(records: Records, prompt: PromptResource, reference: string): Promise<LabelResource> {
  const store = labelStore(records);
  const onPrompt = (label: LabelResource | undefined) =>
    label !== undefined && Object.hasOwn(prompt.labels, label.id) && visibleTo(prompt, label) ? label : undefined;
  let label = onPrompt(await store.get(prompt.organisationId, reference));
  if (!label) {
    const named = await store.list(prompt.organisationId, {
      limit: LABEL_SCAN_LIMIT,
      filter: (candidate) => candidate.name === reference && onPrompt(candidate) !== undefined,
    });
    label = named.items[0];
  }
  if (!label) {
    throw notFound(`The prompt '${prompt.slug ?? prompt.id}' has no label '${reference}'.`, "label_not_found");
  }
  return label;
}

/** An organisation-level label, or one of the prompt's own workspace. */
function visibleTo(prompt: PromptResource, label: LabelResource): boolean {
  return !label.workspaceId || label.workspaceId === prompt.workspaceId;
}
