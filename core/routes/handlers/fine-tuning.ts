import { type ResourceOwner, resourceOwnerOf } from "../../auth/resource-owner.ts";
import { deferRequest } from "../../inference/gateway/deferred-request.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { notFound, unauthorized } from "../../http/errors.ts";
import { json, readJson, validate } from "../../http/json.ts";
import { fineTuningJobStoreOf } from "../../features/fine-tuning/job-store.ts";
import {
  callContext,
  cancelJob,
  createJob,
  providerCall,
  refreshJob,
  targetOfJob,
} from "../../features/fine-tuning/jobs.ts";
import { fineTuningApiFor } from "../../features/fine-tuning/provider-registry.ts";
import {
  checkpointsQuerySchema,
  createJobSchema,
  eventsQuerySchema,
  listJobsQuerySchema,
  metadataSchema,
} from "../../features/fine-tuning/schemas.ts";
import type { StoredFineTuningJob } from "../../features/fine-tuning/types.ts";

/**
 * The fine-tuning routes (spec 2.9, 4.1, 4.5; OpenAI's `fine_tuning/jobs` API). A job belongs to the workspace that
 * created it: any other caller gets 404. Events and checkpoints are the provider's, read with the job's own
 * provider id and the create call's routing.
 */
export const handlers: HandlerMap = {
  async createFineTuningJob(request, ctx) {
    const owner = ownerOf(ctx);
    const input = validate(createJobSchema, await readJson(request));
    const job = await createJob(input, request, ctx, owner, () => deferRequest(request, ctx.principal!, ctx.services));
    return json(job);
  },

  async listFineTuningJobs(request, ctx) {
    const owner = ownerOf(ctx);
    const params = new URL(request.url).searchParams;
    const query = validate(listJobsQuerySchema, Object.fromEntries(params));
    const page = await fineTuningJobStoreOf(ctx.services).list(owner, {
      after: query.after,
      limit: query.limit,
      metadata: metadataFilterOf(params),
    });
    return json({ object: "list", data: page.items.map((stored) => stored.job), has_more: page.hasMore });
  },

  async getFineTuningJob(_request, ctx) {
    const stored = await jobOf(ctx);
    try {
      return json((await refreshJob(ctx.services, stored, ctx.signal)).job);
    } catch (error) {
      // The provider being unreachable does not hide the job: the last known state is answered.
      console.warn(`[${ctx.traceId}] fine-tuning: refreshing ${stored.job.id} failed: ${(error as Error).message}`);
      return json(stored.job);
    }
  },

  async cancelFineTuningJob(_request, ctx) {
    const stored = await jobOf(ctx);
    return json((await cancelJob(ctx.services, stored, ctx.signal)).job);
  },

  async listFineTuningEvents(request, ctx) {
    const stored = await jobOf(ctx);
    const query = validate(eventsQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    const page = await providerItems(ctx, stored, "events", query);
    return json({ object: "list", data: page.data, has_more: page.has_more });
  },

  async listFineTuningCheckpoints(request, ctx) {
    const stored = await jobOf(ctx);
    const query = validate(checkpointsQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
    const page = await providerItems(ctx, stored, "checkpoints", query);
    // The provider's job id is the provider's business: the checkpoints name the gateway's job.
    const data = page.data.map((checkpoint: any) => ({ ...checkpoint, fine_tuning_job_id: stored.job.id }));
    return json({
      object: "list",
      data,
      has_more: page.has_more,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    });
  },
};

function ownerOf(ctx: RequestContext): ResourceOwner {
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  return resourceOwnerOf(ctx.principal);
}

async function jobOf(ctx: RequestContext): Promise<StoredFineTuningJob> {
  const id = ctx.params.id!;
  const stored = await fineTuningJobStoreOf(ctx.services).get(ownerOf(ctx), id);
  if (!stored) throw notFound(`No fine-tuning job found with id '${id}'.`, "fine_tuning_job_not_found");
  return stored;
}

async function providerItems(
  ctx: RequestContext,
  stored: StoredFineTuningJob,
  kind: "events" | "checkpoints",
  query: { after?: string; limit: number },
): Promise<{ data: any[]; has_more: boolean }> {
  const target = await targetOfJob(stored.request, ctx.services, ctx.signal);
  const api = await fineTuningApiFor(target);
  const call = callContext(ctx.services, target, ctx.signal);
  const page = await providerCall(() => api[kind](stored.providerJobId, query, call));
  return { data: Array.isArray(page?.data) ? page.data : [], has_more: page?.has_more === true };
}

/** `metadata[key]=value` pairs of the list query (OpenAI's filter), within the limits of spec 2.8. */
function metadataFilterOf(params: URLSearchParams): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const [name, value] of params) {
    const match = /^metadata\[(.+)\]$/.exec(name);
    if (match) pairs[match[1]!] = value;
  }
  return validate(metadataSchema, pairs, "metadata");
}
