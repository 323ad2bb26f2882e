import type { ResourceOwner } from "../../auth/resource-owner.ts";
import type { DeferredRequest } from "../../inference/gateway/deferred-request.ts";

/**
 * Fine-tuning jobs (spec 2.9, 4.5; OpenAI's fine-tuning API) forwarded to the provider the create call named
 * (OpenAI, Azure OpenAI), recorded in the caller's workspace and refreshed from the provider by a scheduled task.
 * Clients see the gateway's ids only: the job's own, and the gateway's file ids.
 */

export const FINE_TUNING_STATUSES = [
  "validating_files",
  "queued",
  "running",
  "succeeded",
  "failed",
  "cancelled",
] as const;
export type FineTuningStatus = (typeof FINE_TUNING_STATUSES)[number];

export const TERMINAL_FINE_TUNING_STATUSES: ReadonlySet<FineTuningStatus> = new Set([
  "succeeded",
  "failed",
  "cancelled",
]);

export interface WandbIntegration {
  type: "wandb";
  wandb: { project: string; name?: string | null; entity?: string | null; tags?: string[] };
}

/** The fine-tuning job object of spec 2.9 (OpenAI's shape), as clients see it. */
export interface FineTuningJob {
  id: string;
  object: "fine_tuning.job";
  created_at: number;
  error: { code: string; message: string; param: string | null } | null;
  fine_tuned_model: string | null;
  finished_at: number | null;
  hyperparameters: Record<string, unknown>;
  model: string;
  organization_id: string;
  result_files: string[];
  status: FineTuningStatus;
  trained_tokens: number | null;
  training_file: string;
  validation_file: string | null;
  seed: number | null;
  integrations: WandbIntegration[];
  estimated_finish: number | null;
  user_provided_suffix: string | null;
  method?: Record<string, unknown>;
  metadata: Record<string, string> | null;
}

/** What the gateway keeps about a job besides the job object. */
export interface StoredFineTuningJob {
  job: FineTuningJob;
  owner: ResourceOwner;
  /** Who created it and the routing headers of the create call (sealed): what later provider calls use. */
  request: DeferredRequest;
  provider: string;
  providerJobId: string;
  /** The provider's result file ids already copied into the gateway's files, with the gateway's ids. */
  resultFiles: Record<string, string>;
  /** Bumped on every write: conditional writes compare it. */
  revision: number;
}
