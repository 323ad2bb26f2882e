import * as z from "zod";

/** Body of `PUT /v1/integrations/:id/workspaces` and `PUT /v1/virtual-keys/:slug/workspaces`. */
export const workspaceAccessSchema = z.strictObject({
  workspaces: z
    .array(z.looseObject({ id: z.string().min(1), enabled: z.boolean().default(true) }))
    .max(1000)
    .optional(),
  workspace_ids: z.array(z.string().min(1)).max(1000).optional(),
  global_workspace_access: z.looseObject({ enabled: z.boolean() }).nullable().optional(),
  override_existing_workspace_access: z.boolean().optional(),
  override_existing_workspaces_access: z.boolean().optional(),
});

export type WorkspaceAccessBody = z.infer<typeof workspaceAccessSchema>;
