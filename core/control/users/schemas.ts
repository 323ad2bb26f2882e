import * as z from "zod";
import { normaliseEmail } from "./store.ts";

/**
 * Request bodies of the users and invites admin API (core/routes/handlers/users.ts, workspaces.ts). Kept apart
 * from the record access in users.ts, which the data plane imports: zod schemas are built at import.
 */

export const emailSchema = z.email().max(320).transform(normaliseEmail);
export const organisationRoleSchema = z.enum(["owner", "admin", "member"]);
export const workspaceRoleSchema = z.enum(["manager", "member"]);

export const userUpdateSchema = z.strictObject({
  role: organisationRoleSchema.optional(),
  name: z.string().trim().min(1).max(200).nullable().optional(),
  first_name: z.string().trim().max(100).nullable().optional(),
  last_name: z.string().trim().max(100).nullable().optional(),
});

export const inviteCreateSchema = z.strictObject({
  email: emailSchema,
  role: organisationRoleSchema.default("member"),
  workspaces: z
    .array(z.strictObject({ id: z.string().min(1).max(200), role: workspaceRoleSchema.default("member") }))
    .max(100)
    .default([]),
  /** Portkey's field: a workspace user key made for each workspace on acceptance (`name`, `scopes`). */
  workspace_api_key_details: z
    .looseObject({ name: z.string().max(200).optional(), scopes: z.array(z.string()).max(200).optional() })
    .optional(),
});

export const inviteAcceptSchema = z.strictObject({
  token: z.string().min(10).max(200).optional(),
  name: z.string().trim().min(1).max(200).optional(),
  first_name: z.string().trim().max(100).optional(),
  last_name: z.string().trim().max(100).optional(),
});

export type UserUpdateInput = z.infer<typeof userUpdateSchema>;
export type InviteCreateInput = z.infer<typeof inviteCreateSchema>;
export type InviteAcceptInput = z.infer<typeof inviteAcceptSchema>;
