import {
  type PromptVersionContent,
  labelStore,
  partialStore,
  partialVersionKey,
  promptStore,
  promptVersionKey,
} from "../../core/control/prompts/store.ts";
import type { Records } from "../../core/store/ports.ts";

/**
 * Saved prompts, partials and labels written straight through the stores of core/control/prompts/store.ts (the
 * runtime's tests do not depend on the control routes).
 */

export interface SeedOwner {
  organisationId: string;
  workspaceId?: string;
}

/** A prompt with these versions (1..n); version `defaultVersion` (default 1) published; labels by id. */
export async function seedPrompt(
  records: Records,
  owner: SeedOwner,
  options: {
    slug: string;
    versions: Array<Partial<PromptVersionContent> & { string: string }>;
    defaultVersion?: number;
    labels?: Record<string, number>;
  },
) {
  const prompt = await promptStore(records).create(owner.organisationId, {
    name: options.slug,
    slug: options.slug,
    workspaceId: owner.workspaceId,
    status: "active",
    latestVersion: options.versions.length,
    defaultVersion: options.defaultVersion ?? 1,
    labels: options.labels ?? {},
  });
  for (const [index, content] of options.versions.entries()) {
    const version = index + 1;
    await records.put({
      ...promptVersionKey(prompt.id, version),
      promptId: prompt.id,
      organisationId: owner.organisationId,
      version,
      createdAt: Math.floor(Date.now() / 1000),
      parameters: {},
      ...content,
    });
  }
  return prompt;
}

/** A partial whose published version is the last of `versions`. */
export async function seedPartial(records: Records, owner: SeedOwner, slug: string, ...versions: string[]) {
  const partial = await partialStore(records).create(owner.organisationId, {
    name: slug,
    slug,
    workspaceId: owner.workspaceId,
    status: "active",
    latestVersion: versions.length,
    defaultVersion: versions.length,
  });
  for (const [index, text] of versions.entries()) {
    await records.put({
      ...partialVersionKey(partial.id, index + 1),
      partialId: partial.id,
      organisationId: owner.organisationId,
      version: index + 1,
      string: text,
      createdAt: Math.floor(Date.now() / 1000),
    });
  }
  return partial;
}

export const seedLabel = (records: Records, owner: SeedOwner, name: string) =>
  labelStore(records).create(owner.organisationId, { name, workspaceId: owner.workspaceId });
