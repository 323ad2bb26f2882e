import type { Records } from "../../store/ports.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * Saved prompts and what they are made of (spec 1, 4.4, 4.8; Portkey's /prompts, /prompts/partials, /labels,
 * /collections): the record layout shared by the control plane (core/control/prompts-*.ts, partials, labels,
 * collections, sharing) and the runtime that renders and runs prompts (core/features/prompts/).
 *
 * - A prompt (kind PROMPT, ids `pp_...`) belongs to one workspace; its content lives in versions. Every update
 *   of the content writes version n+1; `defaultVersion` is the published one (what a call without a suffix
 *   uses); `labels` maps a label id to the version it points at (movable pointers: production, staging...).
 * - A version: pk `PROMPT#<id>`, sk `VERSION#<n, zero-padded>`, immutable once written (its label pointers live
 *   on the prompt).
 * - A partial (kind PROMPT_PARTIAL, ids `ppp_...`) is a reusable template fragment used as `{{> slug}}`, with its
 *   own versions (pk `PARTIAL#<id>`) and published default.
 * - A label (kind PROMPT_LABEL, ids `lb_...`): organisation-level or one workspace's.
 * - A collection (kind PROMPT_COLLECTION, ids `col_...`): a folder in a workspace, nested through
 *   `parentCollectionId`.
 */

/** A resource that may be shared with other workspaces of its organisation (core/control/prompts/sharing.ts). */
export interface Shareable extends Resource {
  /** True while `sharedWith` is not empty (core/control/workspaces/store.ts blocks deleting the workspace then). */
  shared?: boolean;
  sharedWith?: string[];
}

export interface PromptResource extends Shareable {
  name: string;
  collectionId?: string;
  status: "active" | "archived";
  /** The newest version's number. */
  latestVersion: number;
  /** The published version's number. */
  defaultVersion: number;
  /** Label id -> version number. */
  labels: Record<string, number>;
  createdBy?: string;
  updatedBy?: string;
}

/** What one version of a prompt holds (Portkey's prompt body fields, snake_case as the API writes them). */
export interface PromptVersionContent {
  /**
   * The template: a text prompt, or (a JSON array of `{role, content}` messages as text) a chat prompt; mustache
   * variables `{{name}}`, partials `{{> partial-slug}}`.
   */
  string: string;
  /** Hyperparameters (`temperature`, `max_tokens`...) and the model, as the template sets them. */
  parameters: Record<string, unknown>;
  model?: string;
  /** A saved provider (integration or legacy virtual key) slug the prompt calls by default. */
  virtual_key?: string;
  functions?: unknown[];
  tools?: unknown[];
  tool_choice?: unknown;
  response_format?: unknown;
  template_metadata?: Record<string, unknown>;
  version_description?: string;
}

export interface PromptVersionRecord extends PromptVersionContent {
  pk: string;
  sk: string;
  promptId: string;
  organisationId: string;
  version: number;
  createdAt: number;
  createdBy?: string;
}

export interface PartialResource extends Shareable {
  name: string;
  collectionId?: string;
  status: "active" | "archived";
  latestVersion: number;
  defaultVersion: number;
  createdBy?: string;
  updatedBy?: string;
}

export interface PartialVersionRecord {
  pk: string;
  sk: string;
  partialId: string;
  organisationId: string;
  version: number;
  string: string;
  version_description?: string;
  createdAt: number;
  createdBy?: string;
}

export interface LabelResource extends Resource {
  name: string;
  description?: string;
  color_code?: string;
  createdBy?: string;
}

export interface CollectionResource extends Resource {
  name: string;
  parentCollectionId?: string;
  createdBy?: string;
}

export const promptStore = (records: Records) => new ResourceStore<PromptResource>(records, "PROMPT", "pp");
export const partialStore = (records: Records) => new ResourceStore<PartialResource>(records, "PROMPT_PARTIAL", "ppp");
export const labelStore = (records: Records) => new ResourceStore<LabelResource>(records, "PROMPT_LABEL", "lb");
export const collectionStore = (records: Records) =>
  new ResourceStore<CollectionResource>(records, "PROMPT_COLLECTION", "col");

const padded = (version: number) => String(version).padStart(8, "0");

export const promptVersionKey = (promptId: string, version: number) => ({
  pk: `PROMPT#${promptId}`,
  sk: `VERSION#${padded(version)}`,
});

export const partialVersionKey = (partialId: string, version: number) => ({
  pk: `PARTIAL#${partialId}`,
  sk: `VERSION#${padded(version)}`,
});

export async function readPromptVersion(
  records: Records,
  promptId: string,
  version: number,
): Promise<PromptVersionRecord | undefined> {
  const key = promptVersionKey(promptId, version);
  return (await records.get(key.pk, key.sk)) as PromptVersionRecord | undefined;
}

export async function readPartialVersion(
  records: Records,
  partialId: string,
  version: number,
): Promise<PartialVersionRecord | undefined> {
  const key = partialVersionKey(partialId, version);
  return (await records.get(key.pk, key.sk)) as PartialVersionRecord | undefined;
}
