import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Principal } from "../../../../core/auth/principal.ts";
import type { ResourceOwner } from "../../../../core/auth/resource-owner.ts";
import { loadSettings } from "../../../../core/config/settings.ts";
import { fileStoreOf } from "../../../../core/features/files/file-store.ts";
import { providerKeyOf } from "../../../../core/features/files/provider-key.ts";
import { fineTuningJobStoreOf, newJobId } from "../../../../core/features/fine-tuning/job-store.ts";
import { mergeProviderJob, refreshJob } from "../../../../core/features/fine-tuning/jobs.ts";
import { createProviderJob } from "../../../../core/features/fine-tuning/providers/openai.ts";
import { fineTuningTask } from "../../../../core/features/fine-tuning/scheduled-task.ts";
import type { FineTuningJob, StoredFineTuningJob } from "../../../../core/features/fine-tuning/types.ts";
import { createLocalStores } from "../../../../core/platform/local/local-stores.ts";
import type { ProviderTarget } from "../../../../core/providers/types.ts";
import type { Services } from "../../../../core/services.ts";
import { createServices } from "../../../../core/platform/services.ts";
import type { Stores } from "../../../../core/store/ports.ts";
import { type OpenAIBatchesMock, startOpenAIBatchesMock } from "../../../mocks/openai-batches.ts";
import { type FineTuningMockState, fineTuningRoute, fineTuningState } from "../../../mocks/openai-fine-tuning.ts";

const API_KEY = "sk-ft-unit";

let dataDir: string;
let stores: Stores;
let services: Services;
let mock: OpenAIBatchesMock;
let jobs: FineTuningMockState;
let owner: ResourceOwner;

const target = (): ProviderTarget => ({ provider: "openai", apiKey: API_KEY, customHost: `${mock.url}/v1` });
const options = () => ({ trustedHosts: services.trustedHosts, signal: new AbortController().signal, timeoutMs: 5000 });

function jobObject(overrides: Partial<FineTuningJob> = {}): FineTuningJob {
  return {
    id: newJobId(),
    object: "fine_tuning.job",
    created_at: 1_700_000_000,
    error: null,
    fine_tuned_model: null,
    finished_at: null,
    hyperparameters: {},
    model: "gpt-4o-mini",
    organization_id: owner.organisationId,
    result_files: [],
    status: "validating_files",
    trained_tokens: null,
    training_file: "file-train",
    validation_file: null,
    seed: null,
    integrations: [],
    estimated_finish: null,
    user_provided_suffix: null,
    metadata: null,
    ...overrides,
  };
}

/** A job whose deferred routing names the mock OpenAI (what the create call would have kept). */
async function storedJob(providerJobId: string, overrides: Partial<FineTuningJob> = {}): Promise<StoredFineTuningJob> {
  const principal: Principal = {
    kind: "api_key",
    organisationId: owner.organisationId,
    workspaceId: owner.workspaceId,
    scopes: ["*"],
  };
  const headers = {
    "x-gateway-provider": "openai",
    authorization: `Bearer ${API_KEY}`,
    "x-gateway-custom-host": `${mock.url}/v1`,
  };
  const stored: StoredFineTuningJob = {
    job: jobObject(overrides),
    owner,
    request: { principal, sealedHeaders: await stores.secrets.encrypt(JSON.stringify(headers)) },
    provider: "openai",
    providerJobId,
    resultFiles: {},
    revision: 1,
  };
  await fineTuningJobStoreOf(services).create(stored);
  return stored;
}

async function providerJob(model = "gpt-4o-mini"): Promise<string> {
  const file = await fileStoreOf(services).create(owner, { filename: "t.jsonl", purpose: "fine-tune", body: "{}\n" });
  const { ensureProviderFile } = await import("../../../../core/features/files/provider-files.ts");
  const trainingFile = await ensureProviderFile(services, file, target(), new AbortController().signal);
  return (await createProviderJob(target(), { model, training_file: trainingFile }, options())).id;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "fine-tuning-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  services = createServices(loadSettings({ TRUSTED_CUSTOM_HOSTS: "127.0.0.1" }), stores);
  jobs = fineTuningState(3);
  mock = await startOpenAIBatchesMock({ apiKey: API_KEY, extraRoutes: [fineTuningRoute(jobs)] });
});
afterAll(async () => {
  await mock?.close();
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});
beforeEach(() => {
  owner = { organisationId: `org_${randomUUID().slice(0, 8)}`, workspaceId: "ws_1" };
});

describe("fine-tuning job store", () => {
  it("lists newest first with after, limit and has_more, filtered by metadata, per owner", async () => {
    const store = fineTuningJobStoreOf(services);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const stored = await storedJob(`ftjob-provider-${i}`, { metadata: { team: i % 2 === 0 ? "even" : "odd" } });
      made.push(stored.job.id);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const newest = [...made].reverse();
    const first = await store.list(owner, { limit: 2, metadata: {} });
    expect(first.items.map((item) => item.job.id)).toEqual(newest.slice(0, 2));
    expect(first.hasMore).toBe(true);
    const second = await store.list(owner, { limit: 2, after: newest[1], metadata: {} });
    expect(second.items.map((item) => item.job.id)).toEqual(newest.slice(2, 4));
    const last = await store.list(owner, { limit: 2, after: newest[3], metadata: {} });
    expect(last).toMatchObject({ hasMore: false });
    expect(last.items.map((item) => item.job.id)).toEqual([newest[4]]);
    const even = await store.list(owner, { limit: 10, metadata: { team: "even" } });
    expect(even.items.map((item) => item.job.id)).toEqual([newest[0], newest[2], newest[4]]);

    const other = { ...owner, workspaceId: "ws_other" };
    expect((await store.list(other, { limit: 10, metadata: {} })).items).toEqual([]);
    expect(await store.get(other, made[0]!)).toBeUndefined();
    expect(await store.get(owner, "ftjob-../../x")).toBeUndefined();
  });

  it("writes only from the revision read, never after a terminal status, and keeps the active index", async () => {
    const store = fineTuningJobStoreOf(services);
    const stored = await storedJob("ftjob-provider-x");
    const fresh = (await store.get(owner, stored.job.id))!;
    const running = await store.update(fresh, { job: { ...fresh.job, status: "running" } });
    expect(running?.revision).toBe(2);
    // A writer that read revision 1 loses.
    expect(await store.update(fresh, { job: { ...fresh.job, status: "queued" } })).toBeUndefined();
    const activeIds = async () => {
      const ids: string[] = [];
      for await (const job of store.active()) ids.push(job.job.id);
      return ids;
    };
    expect(await activeIds()).toContain(stored.job.id);
    const done = await store.update(running!, { job: { ...running!.job, status: "succeeded" } });
    expect(done?.job.status).toBe("succeeded");
    expect(await activeIds()).not.toContain(stored.job.id);
    expect(await store.update(done!, { job: { ...done!.job, status: "running" } })).toBeUndefined();
    expect((await store.get(owner, stored.job.id))!.job.status).toBe("succeeded");
  });
});

describe("mergeProviderJob", () => {
  it("keeps the gateway's ids and maps provider statuses (Azure's older ones too)", () => {
    owner = { organisationId: "org_m", workspaceId: "ws" };
    const base = jobObject({ training_file: "file-gateway-train" });
    const merged = mergeProviderJob(
      base,
      {
        id: "ftjob-provider",
        status: "pending",
        training_file: "file-provider",
        organization_id: "org-provider",
        seed: 9,
      },
      {},
    );
    expect(merged).toMatchObject({
      id: base.id,
      status: "queued",
      training_file: "file-gateway-train",
      organization_id: "org_m",
      seed: 9,
    });
    expect(mergeProviderJob(base, { status: "canceled" }, {}).status).toBe("cancelled");
    expect(mergeProviderJob(base, { status: "something-new" }, {}).status).toBe("validating_files");
    const failed = mergeProviderJob(base, { status: "failed", error: { code: "bad", message: "no", param: null } }, {});
    expect(failed.error).toEqual({ code: "bad", message: "no", param: null });
    const results = mergeProviderJob(
      base,
      { status: "succeeded", result_files: ["file-p1", "file-p2"] },
      { "file-p1": "file-g1" },
    );
    expect(results.result_files).toEqual(["file-g1"]);
  });
});

describe("refresh and the scheduled task", () => {
  it("refreshJob follows the provider and copies its result files into the owner's files, once", async () => {
    const providerJobId = await providerJob();
    let stored = await storedJob(providerJobId);
    for (let i = 0; i < 3; i++) stored = await refreshJob(services, stored, new AbortController().signal, target());
    expect(stored.job.status).toBe("succeeded");
    expect(stored.job.fine_tuned_model).toMatch(/^ft:gpt-4o-mini:/);
    const [resultId] = stored.job.result_files;
    expect(resultId).toBe(`file-${stored.job.id}-result-1`);
    const copy = (await fileStoreOf(services).get(owner, resultId!))!;
    expect(copy.file).toMatchObject({ purpose: "fine-tune-results", filename: "step_metrics.csv" });
    const providerFileId = jobs.jobs.get(providerJobId)!.job.result_files[0];
    expect(copy.providerFiles[providerKeyOf(target())]).toBe(providerFileId);
    // Finished: no more provider calls.
    const polls = jobs.jobs.get(providerJobId)!.polls;
    await refreshJob(services, stored, new AbortController().signal, target());
    expect(jobs.jobs.get(providerJobId)!.polls).toBe(polls);
  });

  it("the task refreshes every active job with its own routing; one failing job does not stop the others", async () => {
    const good = await storedJob(await providerJob());
    const broken = await storedJob("ftjob-mock-unknown");
    for (let i = 0; i < 3; i++) await fineTuningTask.run(services, new AbortController().signal);
    const store = fineTuningJobStoreOf(services);
    expect((await store.get(owner, good.job.id))!.job.status).toBe("succeeded");
    expect((await store.get(owner, broken.job.id))!.job.status).toBe("validating_files");
  });
});
