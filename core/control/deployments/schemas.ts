import * as z from "zod";

/** Request bodies of the deployments API (core/routes/handlers/deployments.ts). */

const httpUrl = z
  .url({ protocol: /^https?$/ })
  .max(2000)
  .transform((value) => value.replace(/\/+$/, ""));

export const DEPLOYMENT_HEALTH = ["healthy", "degraded", "unhealthy"] as const;

export const deploymentCreateSchema = z.strictObject({
  name: z.string().trim().min(1).max(200),
  version: z.string().trim().min(1).max(100).optional(),
  region: z.string().trim().min(1).max(100).optional(),
  url: httpUrl.optional(),
});

export const heartbeatSchema = z.strictObject({
  version: z.string().trim().min(1).max(100).optional(),
  status: z.enum(DEPLOYMENT_HEALTH).default("healthy"),
  region: z.string().trim().min(1).max(100).optional(),
  url: httpUrl.optional(),
  /** How often this deployment beats: the age thresholds of online / stale / offline follow it. */
  heartbeat_interval_seconds: z.number().int().min(1).max(86_400).optional(),
});

export type DeploymentCreateInput = z.infer<typeof deploymentCreateSchema>;
export type HeartbeatInput = z.infer<typeof heartbeatSchema>;
