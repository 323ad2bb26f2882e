import type { NativeBatchContext } from "../batches/types.ts";
import type { StoredFile } from "../files/types.ts";
import type { Services } from "../../services.ts";
import type { CreateJobInput } from "./schemas.ts";

/**
 * One provider's fine-tuning API behind the gateway's OpenAI-shaped jobs. Every method answers the provider's job
 * in OpenAI's fine-tuning job shape (`id` = the provider's job id, `status` one of spec 2.9's, `fine_tuned_model`,
 * `error`, `finished_at`, `result_files` = provider file ids, ...) so jobs.ts merges every provider the same way.
 *   openai, azure-openai  OpenAI's fine-tuning API (providers/openai.ts)
 *   vertex-ai             Vertex AI supervised tuning jobs for Gemini (providers/vertex.ts)
 *   bedrock               Bedrock model customisation jobs (providers/bedrock.ts)
 */

/** The provider's job, in OpenAI's shape. */
export type ProviderJob = Record<string, unknown> & { id: string };

export interface ProviderItemPage {
  data: any[];
  has_more: boolean;
}

/** A provider call's setting: the target, the guarded client's options, and the services (to read files). */
export interface FineTuningCallContext extends NativeBatchContext {
  services: Services;
}

export interface ProviderJobCreate {
  /** The gateway's job id (names the job's objects in a bucket). */
  jobId: string;
  input: CreateJobInput;
  training: StoredFile;
  validation?: StoredFile;
}

export interface FineTuningProviderApi {
  create(create: ProviderJobCreate, ctx: FineTuningCallContext): Promise<ProviderJob>;
  get(providerJobId: string, ctx: FineTuningCallContext): Promise<ProviderJob>;
  /** Asks the provider to cancel; answers the job as it is after the request. */
  cancel(providerJobId: string, ctx: FineTuningCallContext): Promise<ProviderJob>;
  events(
    providerJobId: string,
    query: { after?: string; limit: number },
    ctx: FineTuningCallContext,
  ): Promise<ProviderItemPage>;
  checkpoints(
    providerJobId: string,
    query: { after?: string; limit: number },
    ctx: FineTuningCallContext,
  ): Promise<ProviderItemPage>;
  /** A result file the job's `result_files` names: its filename and content, streamed. */
  resultFile(
    providerFileId: string,
    ctx: FineTuningCallContext,
  ): Promise<{ filename: string; body: ReadableStream<Uint8Array> }>;
}
