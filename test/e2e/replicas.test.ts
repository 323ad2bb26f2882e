import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeBuiltBundle } from "../helpers/bundle-gateway.ts";
import { chatLine, jsonl } from "../helpers/batches.ts";
import { call, type Replicas, startReplicas } from "../helpers/replicas.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Two gateway processes on one MariaDB database (GATEWAY_STORE=mysql), each the `npm start` bundle, as replicas
 * behind a load balancer: limits and budgets hold across both, a key made through one works through the other at
 * once, a Responses chain and a background cancel move between them, and a gateway-run batch is worked by both
 * and finishes with every line once after one of them is killed.
 */

/** The mock's answer: 100 words, so 100 completion tokens (the mock counts words). */
const REPLY = Array.from({ length: 100 }, (_, index) => `w${index}`).join(" ");
/** What a replica takes for a policy change made elsewhere (docs/limits.md: within 3 seconds). */
const POLICY_REFRESH_MS = 3_500;

let upstream: OpenAIMock;
let slowUpstream: OpenAIMock;
let replicas: Replicas;
let workspaceId: string;

beforeAll(async () => {
  upstream = await startOpenAIMock({ reply: REPLY });
  slowUpstream = await startOpenAIMock();
  slowUpstream.setFault({ delayMs: 6_000 });
  replicas = await startReplicas(2, {
    name: "replicas",
    env: { GATEWAY_QUEUE_VISIBILITY_SECONDS: "4", GATEWAY_WORKER_POLL_MS: "100", ENABLE_PROMETHEUS: "true" },
  });
  const workspace = await admin(0, "POST", "/v1/admin/workspaces", { name: "Replicas" });
  expect(workspace.status, workspace.text).toBe(201);
  workspaceId = workspace.body.id;
}, 120_000);

afterAll(async () => {
  await replicas?.close();
  await upstream?.close();
  await slowUpstream?.close();
  await removeBuiltBundle();
});

const admin = (replica: number, method: string, path: string, body?: unknown) =>
  call(replicas.gateways[replica]!, replicas.adminKey, method, path, body);

async function workspaceKey(replica: number, name: string) {
  const created = await admin(replica, "POST", "/v1/api-keys/workspace/service", {
    name,
    workspace_id: workspaceId,
    scopes: ["*"],
  });
  expect(created.status, created.text).toBe(201);
  return { id: created.body.id as string, key: created.body.key as string };
}

function chat(replica: number, key: string, body: Record<string, unknown> = {}) {
  return call(
    replicas.gateways[replica]!,
    key,
    "POST",
    "/v1/chat/completions",
    { model: "gpt-4o-mini", messages: [{ role: "user", content: "Say hello" }], ...body },
    {
      "x-gateway-provider": "openai",
      authorization: "Bearer sk-upstream",
      "x-gateway-custom-host": `${upstream.url}/v1`,
    },
  );
}

async function limit(replica: number, keyId: string, type: "requests" | "tokens", creditLimit: number) {
  const policy = await admin(replica, "POST", "/v2/policies/usage-limits", {
    name: `${type} across replicas`,
    type,
    credit_limit: creditLimit,
    conditions: [{ key: "api_key", value: keyId }],
    group_by: [{ key: "api_key" }],
    periodic_reset: "daily",
  });
  expect(policy.status, policy.text).toBe(201);
  await new Promise((resolve) => setTimeout(resolve, POLICY_REFRESH_MS));
  return `/v2/policies/usage-limits/${policy.body.id}`;
}

const openai = (replica: number, headers: Record<string, string>) =>
  new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${replicas.gateways[replica]!.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": replicas.adminKey, ...headers },
  });

/** Requests a replica counted (Prometheus), for a route. */
async function requestsCounted(replica: number, route: string): Promise<number> {
  const text = await (await fetch(`${replicas.gateways[replica]!.url}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("gateway_requests_total{") && line.includes(`route="${route}"`)) {
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return total;
}

describe("two gateway replicas on one MariaDB", () => {
  it("admit exactly 100 of 500 concurrent requests split across them against a requests limit of 100", async () => {
    const key = await workspaceKey(0, "requests limit");
    await limit(1, key.id, "requests", 100);
    const answers = await Promise.all(Array.from({ length: 500 }, (_, index) => chat(index % 2, key.key)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(400);
    // Both replicas admitted some: the count is shared, not per process.
    expect(answers.filter((answer, index) => answer.status === 200 && index % 2 === 0).length).toBeGreaterThan(0);
    expect(answers.filter((answer, index) => answer.status === 200 && index % 2 === 1).length).toBeGreaterThan(0);
  });

  it("hold a 1,000-token budget across both within one request's tokens, the counter exact", async () => {
    const key = await workspaceKey(1, "token budget");
    const path = await limit(0, key.id, "tokens", 1000);
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, index) => chat(index % 2, key.key, { max_tokens: 150 })),
    );
    expect(answers.every((answer) => answer.status === 200 || answer.status === 429)).toBe(true);
    // Then one at a time, alternating, until the budget is spent: both replicas refuse from there.
    for (let round = 0; round < 40; round++) {
      const answer = await chat(round % 2, key.key, { max_tokens: 150 });
      answers.push(answer);
      if (answer.status === 429 && answers.at(-2)?.status === 429) break;
    }
    expect(answers.at(-1)!.status).toBe(429);
    expect(answers.at(-2)!.status).toBe(429);
    const admitted = answers.filter((answer) => answer.status === 200);
    const used = admitted.reduce((sum, answer) => sum + answer.body.usage.total_tokens, 0);
    const perRequest = admitted[0]!.body.usage.total_tokens;
    expect(used).toBeGreaterThanOrEqual(1000);
    expect(used - 1000).toBeLessThanOrEqual(perRequest);
    // Every reservation settled once, whichever replica made it.
    await expect
      .poll(async () => (await admin(1, "GET", `${path}/usage`)).body.data?.[0]?.usage, { timeout: 10_000 })
      .toBe(used);
  });

  it("use a key created through one replica through the other at once", async () => {
    const key = await workspaceKey(0, "made on replica 0");
    const answer = await chat(1, key.key);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.choices[0].message.content).toBe(REPLY);
  });

  it("carry a Responses chain that alternates replicas, each turn seeing the whole conversation", async () => {
    const headers = { "x-gateway-provider": "openai", "x-gateway-custom-host": `${upstream.url}/v1` };
    const first = await openai(0, headers).responses.create({ model: "gpt-4o-mini", input: "turn one" });
    const second = await openai(1, headers).responses.create({
      model: "gpt-4o-mini",
      input: "turn two",
      previous_response_id: first.id,
    });
    const third = await openai(0, headers).responses.create({
      model: "gpt-4o-mini",
      input: "turn three",
      previous_response_id: second.id,
    });
    const sent = upstream.lastRequest()!.body.toString();
    for (const turn of ["turn one", "turn two", "turn three"]) expect(sent).toContain(turn);
    expect((await openai(1, {}).responses.retrieve(third.id)).previous_response_id).toBe(second.id);
    expect((await openai(0, {}).responses.retrieve(first.id)).id).toBe(first.id);
  });

  it("cancel through one replica a background response running in the other", async () => {
    // The July 2026 schema, which has the `cancelled` status (the spec's older one shows it as `failed`).
    const beta = { "x-gateway-beta": "use-responses-api-2026-07-30" };
    const headers = { ...beta, "x-gateway-provider": "openai", "x-gateway-custom-host": `${slowUpstream.url}/v1` };
    const queued = await openai(0, headers).responses.create({ model: "gpt-4o-mini", input: "slow", background: true });
    await expect.poll(async () => (await openai(0, beta).responses.retrieve(queued.id)).status).toBe("in_progress");
    const cancelled = await openai(1, beta).responses.cancel(queued.id);
    expect(cancelled.status).toBe("cancelled");
    // The run on replica 0 notices (it polls its record) and its late answer does not overwrite the cancel.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    expect((await openai(0, beta).responses.retrieve(queued.id)).status).toBe("cancelled");
    expect((await openai(1, beta).responses.retrieve(queued.id)).status).toBe("cancelled");
  });

  it("work a gateway-run batch on both; after one is killed mid-batch no line is lost or in the output twice", {
    timeout: 240_000,
  }, async () => {
    const lines = 400;
    upstream.setFault({ delayMs: 20 });
    const input = Array.from({ length: lines }, (_, i) => chatLine(`line-${String(i).padStart(4, "0")}`, `text ${i}`));
    const client = openai(0, {});
    const file = await client.files.create({
      file: await toFile(Buffer.from(jsonl(input)), "input.jsonl"),
      purpose: "batch",
    });
    const callsBefore = upstream.requests.length;
    const created = await openai(0, {
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      "x-gateway-batch-mode": "gateway",
    }).batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });

    // Kill replica 0 once some lines settled (read through replica 1), well before all did.
    const route = "/v1/chat/completions";
    const countedBefore = [await requestsCounted(0, route), await requestsCounted(1, route)];
    for (const deadline = Date.now() + 60_000; ; ) {
      const batch = await openai(1, {}).batches.retrieve(created.id);
      const settled = batch.request_counts!.completed + batch.request_counts!.failed;
      if (settled >= 80) break;
      if (Date.now() > deadline) throw new Error("the batch made no progress");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const ranOnKilled = (await requestsCounted(0, route)) - countedBefore[0]!;
    expect(ranOnKilled, "replica 0 ran lines before it was killed").toBeGreaterThan(0);
    await replicas.gateways[0]!.kill("SIGKILL");

    const survivor = openai(1, {});
    let batch = await survivor.batches.retrieve(created.id);
    for (const deadline = Date.now() + 180_000; batch.status !== "completed" && Date.now() < deadline; ) {
      expect(["in_progress", "finalizing"]).toContain(batch.status);
      await new Promise((resolve) => setTimeout(resolve, 200));
      batch = await survivor.batches.retrieve(created.id);
    }
    expect(batch.status).toBe("completed");
    expect(batch.request_counts).toEqual({ total: lines, completed: lines, failed: 0 });
    const output = (await (await survivor.files.content(batch.output_file_id!)).text()).trim().split("\n");
    const ids = output.map((line) => JSON.parse(line).custom_id);
    expect(ids).toEqual(input.map((line) => line.custom_id));
    expect((await requestsCounted(1, route)) - countedBefore[1]!, "replica 1 ran lines too").toBeGreaterThan(0);
    // Only lines in flight on the killed replica (at most 4 receives of 10) may have reached the provider twice.
    const calls = upstream.requests.length - callsBefore;
    expect(calls).toBeGreaterThanOrEqual(lines);
    expect(calls).toBeLessThanOrEqual(lines + 40);
    upstream.setFault(undefined);
  });
});
