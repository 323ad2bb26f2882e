import * as z from "zod";
import { slugSchema } from "../credentials/schemas.ts";

/**
 * Request bodies of the saved-prompt routes (core/routes/handlers/prompts.ts: prompts, versions, partials,
 * labels, collections, sharing), in the shapes the portkey-ai SDK sends. The template itself (`string`) is
 * checked by core/control/prompts/templates.ts in the service.
 */

/** A template: 1 MiB is far beyond any real prompt and keeps a stored version well within a record's size. */
const template = z.string().min(1).max(1_000_000);
const name = z.string().trim().min(1).max(255);
const reference = z.string().trim().min(1).max(200);
const description = z.string().max(2000);
const jsonObject = z.record(z.string(), z.unknown());

/** `partials` is a path segment of its own (`/v1/prompts/partials`): no prompt may take it as its slug. */
const promptSlug = slugSchema.refine((slug) => slug !== "partials", "'partials' is reserved");

/** A version's content fields (Portkey's prompt body). */
const contentFields = {
  string: template,
  parameters: jsonObject,
  model: z.string().trim().min(1).max(200),
  virtual_key: z.string().trim().min(1).max(200),
  functions: z.array(z.unknown()).max(128),
  tools: z.array(z.unknown()).max(128),
  tool_choice: z.unknown(),
  response_format: z.unknown(),
  template_metadata: jsonObject,
  version_description: description,
};

/** The content fields a version may leave out, in either body (the same order in both). */
const optionalContent = {
  model: contentFields.model.optional(),
  virtual_key: contentFields.virtual_key.optional(),
  functions: contentFields.functions.optional(),
  tools: contentFields.tools.optional(),
  tool_choice: contentFields.tool_choice.optional(),
  response_format: contentFields.response_format.optional(),
  template_metadata: contentFields.template_metadata.optional(),
  version_description: contentFields.version_description.optional(),
};

export const promptCreateSchema = z.strictObject({
  name,
  slug: promptSlug.optional(),
  /** The prompt's collection (id or slug); it decides the workspace when `workspace_id` is not sent. */
  collection_id: reference.optional(),
  workspace_id: reference.optional(),
  string: contentFields.string,
  parameters: contentFields.parameters.default({}),
  ...optionalContent,
});

/** Content fields write a new version; `name` and `collection_id` change the prompt only. */
export const promptUpdateSchema = z.strictObject({
  name: name.optional(),
  collection_id: reference.optional(),
  string: contentFields.string.optional(),
  parameters: contentFields.parameters.optional(),
  ...optionalContent,
});

/** `PUT .../makeDefault`: the version to publish. */
export const publishSchema = z.strictObject({ version: z.coerce.number().int().min(1) });

/** `PUT /v1/prompts/:id/versions/:versionId`: points a label (id or slug) at this version. */
export const promptVersionUpdateSchema = z.strictObject({ label_id: reference });

export const partialCreateSchema = z.strictObject({
  name,
  /** What templates include (`{{> slug}}`); made from the name when not sent. */
  slug: slugSchema.optional(),
  string: template,
  workspace_id: reference.optional(),
  collection_id: reference.optional(),
  version_description: description.optional(),
});

export const partialUpdateSchema = z.strictObject({
  name: name.optional(),
  string: template.optional(),
  /** Portkey's name for the new version's description. */
  description: description.optional(),
  version_description: description.optional(),
  status: z.enum(["active", "archived"]).optional(),
});

export const labelCreateSchema = z.strictObject({
  name: z
    .string()
    .trim()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "a label name is letters, digits, '.', '_' or '-'")
    // `lb_...` reads as a label id.
    .refine((value) => !value.startsWith("lb_"), "a label name cannot start with 'lb_'"),
  description: description.optional(),
  color_code: z
    .string()
    .regex(/^#[0-9A-Fa-f]{6}$/, "a colour is #rrggbb")
    .optional(),
  /** A workspace's label (id or slug); without it an organisation-level one. */
  workspace_id: reference.optional(),
  organisation_id: reference.optional(),
});

export const labelUpdateSchema = z.strictObject({
  name: labelCreateSchema.shape.name.optional(),
  description: description.optional(),
  color_code: labelCreateSchema.shape.color_code,
});

export const collectionCreateSchema = z.strictObject({
  name,
  slug: slugSchema.optional(),
  workspace_id: reference.optional(),
  parent_collection_id: reference.optional(),
});

export const collectionUpdateSchema = z.strictObject({
  name: name.optional(),
  /** `null` moves the collection to the top level. */
  parent_collection_id: reference.nullable().optional(),
});

/** `POST /v2/prompts/:id/share` (and a partial's): the workspaces (ids or slugs) to share with. */
export const shareSchema = z.strictObject({ workspace_ids: z.array(reference).min(1).max(100) });

/** `POST /v2/prompts/:id/unshare`: the workspaces to stop sharing with; without them, all. */
export const unshareSchema = z.strictObject({ workspace_ids: z.array(reference).min(1).max(100).optional() });

/** `POST /v2/prompts/:id/fork`: where the copy goes (the caller's workspace by default), and its name. */
export const forkSchema = z.strictObject({
  workspace_id: reference.optional(),
  collection_id: reference.optional(),
  name: name.optional(),
  slug: slugSchema.optional(),
});

export type PromptCreateInput = z.infer<typeof promptCreateSchema>;
export type PromptUpdateInput = z.infer<typeof promptUpdateSchema>;
export type PartialCreateInput = z.infer<typeof partialCreateSchema>;
export type PartialUpdateInput = z.infer<typeof partialUpdateSchema>;
export type LabelCreateInput = z.infer<typeof labelCreateSchema>;
export type LabelUpdateInput = z.infer<typeof labelUpdateSchema>;
export type CollectionCreateInput = z.infer<typeof collectionCreateSchema>;
export type CollectionUpdateInput = z.infer<typeof collectionUpdateSchema>;
export type ForkInput = z.infer<typeof forkSchema>;
