import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { resourceOwnerOf } from "../../core/auth/resource-owner.ts";
import { sweepBatches } from "../../core/features/batches/sweep.ts";
import { fileStoreOf } from "../../core/features/files/file-store.ts";
import { chatLine, fileText, jsonl, TERMINAL, uploadJsonl } from "../helpers/batches.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { echoChat } from "../helpers/echo-upstream.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { validatingFetch } from "../helpers/openai-schema.ts";

/**
 * Gateway-run batches end to end with the openai SDK: upload, create, poll, download; validation errors with line
 * numbers; cancel; expiry; list; PUT /v2/batches; workspace isolation; a fallback config. The worker loop polls
 * slowly here (GATEWAY_WORKER_POLL_MS) and the tests drive it with drain(), so each step is deterministic.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let broken: OpenAIMock;
let client: OpenAI;
let workspaceKey: string;
let otherKey: string;
let clientA: OpenAI;
let clientB: OpenAI;
let ownerA: ReturnType<typeof resourceOwnerOf>;
let ownerB: ReturnType<typeof resourceOwnerOf>;

const sdk = (key: string, headers: Record<string, string> = {}) =>
  new OpenAI({
    // Every OpenAI-shaped answer is checked against OpenAI's published OpenAPI document.
    fetch: validatingFetch(),
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      "x-gateway-batch-mode": "gateway",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      ...headers,
    },
  });

beforeAll(async () => {
  upstream = await startOpenAIMock({ guard: echoChat });
  broken = await startOpenAIMock({ guard: () => ({ status: 500, body: { error: { message: "down" } } }) });
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  const workspace = await seedWorkspace(gateway, "Batches A");
  const other = await seedWorkspace(gateway, "Batches B");
  workspaceKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a",
      workspace_id: workspace.id,
      scopes: ["logs.list", "batches.update"],
    })
  ).key;
  otherKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "b",
      workspace_id: other.id,
      scopes: [],
    })
  ).key;
  client = sdk(workspaceKey);
  clientA = client;
  clientB = sdk(otherKey);
  const organisationId = gateway.gateway.bootstrap.organisationId;
  ownerA = { organisationId, workspaceId: workspace.id };
  ownerB = { organisationId, workspaceId: other.id };
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await broken?.close();
});

const services = () => gateway.gateway.services;

async function waitFor(id: string, sdkClient = client, statuses = TERMINAL) {
  for (let round = 0; round < 400; round++) {
    const batch = await sdkClient.batches.retrieve(id);
    if (statuses.has(batch.status)) return batch;
    await gateway.gateway.worker.drain();
  }
  throw new Error(`batch ${id} did not finish`);
}

const lines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

describe("gateway-run batches", () => {
  it("runs every line through the pipeline and writes the output and error files in line order", async () => {
    const input = ["one", "two", "FAIL", "four", "five", "six", "seven"].map((text, i) =>
      chatLine(`req-${i + 1}`, text),
    );
    const fileId = await uploadJsonl(client, jsonl(input));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { job: "nightly" },
    });
    expect(created).toMatchObject({ object: "batch", status: "validating", metadata: { job: "nightly" } });
    expect(created.id).toMatch(/^batch_/);
    expect(created.expires_at).toBe(created.created_at + 24 * 3600);

    const done = await waitFor(created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 7, completed: 6, failed: 1 });
    for (const field of ["in_progress_at", "finalizing_at", "completed_at"] as const)
      expect(done[field]).toBeGreaterThan(0);
    expect(done.model).toBe("gpt-4o-mini");

    const output = lines(await fileText(client, done.output_file_id!));
    expect(output.map((line) => line.custom_id)).toEqual(["req-1", "req-2", "req-4", "req-5", "req-6", "req-7"]);
    expect(output.map((line) => line.response.body.choices[0].message.content)).toEqual(
      ["one", "two", "four", "five", "six", "seven"].map((text) => `echo: ${text}`),
    );
    for (const line of output) {
      expect(line).toMatchObject({ error: null, response: { status_code: 200 } });
      expect(line.id).toMatch(/^batch_req_/);
    }
    const errors = lines(await fileText(client, done.error_file_id!));
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ custom_id: "req-3", response: { status_code: 400 } });
    expect(errors[0].response.body.error.message).toContain("FAIL");

    // The output file is a gateway file of the workspace, purpose batch_output.
    const stored = await fileStoreOf(services()).get(ownerA, done.output_file_id!);
    expect(stored?.file.purpose).toBe("batch_output");

    // One request log per line, priced (gpt-4o-mini is in the catalog; gateway-run lines pay normal prices).
    await expect
      .poll(
        async () => (await call(gateway, workspaceKey, "GET", "/v1/logs?provider=openai&limit=100")).body.data.length,
        {
          timeout: 5000,
        },
      )
      .toBe(7);
    const logs = (await call(gateway, workspaceKey, "GET", "/v1/logs?provider=openai&limit=100")).body.data;
    const priced = logs.filter((log: any) => log.status === 200);
    expect(priced).toHaveLength(6);
    for (const log of priced) expect(log.cost).toBeGreaterThan(0);
    expect(logs.some((log: any) => log.status === 400)).toBe(true);
    // Each line's log names its batch and line: the batch's cost is the sum of its logs.
    for (const log of logs) expect(log.metadata).toMatchObject({ batch_id: done.id, custom_id: expect.any(String) });
    expect(new Set(logs.map((log: any) => log.metadata.custom_id)).size).toBe(7);
  });

  it("fails a batch whose lines do not validate, naming each line", async () => {
    const text = jsonl([
      chatLine("ok-1", "fine"),
      "{not json",
      { ...chatLine("wrong-url", "x"), url: "/v1/embeddings" },
      chatLine("ok-1", "duplicate id"),
      { custom_id: "bad-body", method: "POST", url: "/v1/chat/completions", body: { model: "m", messages: "nope" } },
      { ...chatLine("get", "x"), method: "GET" },
    ]);
    const fileId = await uploadJsonl(client, text);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await waitFor(created.id);
    expect(done.status).toBe("failed");
    expect(done.failed_at).toBeGreaterThan(0);
    const data = done.errors!.data!;
    expect(data.map((error) => [error.line, error.code, error.param])).toEqual([
      [2, "invalid_json_line", null],
      [3, "mismatched_url", "url"],
      [4, "duplicate_custom_id", "custom_id"],
      [5, "invalid_request", "body.messages"],
      [6, "invalid_method", "method"],
    ]);
    expect(done.output_file_id).toBeNull();
  });

  it("fails an empty input file", async () => {
    const fileId = await uploadJsonl(client, "\n\n");
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await waitFor(created.id);
    expect(done.status).toBe("failed");
    expect(done.errors!.data![0]).toMatchObject({ code: "empty_file", line: null });
  });

  it("cancels: lines not yet run settle as cancelled, the batch ends cancelled with partial results", async () => {
    const input = Array.from({ length: 25 }, (_, i) => chatLine(`c-${i}`, `line ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await gateway.gateway.worker.drain(); // start: validated, lines queued
    await gateway.gateway.worker.drain(); // the first ten lines run
    const cancelling = await client.batches.cancel(created.id);
    expect(cancelling.status).toBe("cancelling");
    expect(cancelling.cancelling_at).toBeGreaterThan(0);
    const done = await waitFor(created.id);
    expect(done.status).toBe("cancelled");
    expect(done.cancelled_at).toBeGreaterThan(0);
    expect(done.request_counts!.total).toBe(25);
    expect(done.request_counts!.completed + done.request_counts!.failed).toBe(25);
    expect(done.request_counts!.completed).toBeGreaterThanOrEqual(1);
    const errors = lines(await fileText(client, done.error_file_id!));
    expect(errors.length).toBe(done.request_counts!.failed);
    for (const line of errors) expect(line.error.code).toBe("batch_cancelled");
    // A cancelled batch cannot be cancelled into anything else; a finished one answers 409.
    expect((await client.batches.cancel(created.id)).status).toBe("cancelled");
  });

  it("expires after its completion window, keeping the results it has", async () => {
    const input = Array.from({ length: 15 }, (_, i) => chatLine(`e-${i}`, `line ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "1h" as "24h", // the gateway accepts 1h to 168h; the SDK types say 24h
    });
    await gateway.gateway.worker.drain();
    await gateway.gateway.worker.drain();
    // The sweep runs two hours later: the window has passed.
    await sweepBatches(services(), new AbortController().signal, { now: () => Date.now() + 2 * 3600_000 });
    const done = await client.batches.retrieve(created.id);
    expect(done.status).toBe("expired");
    expect(done.expired_at).toBeGreaterThan(0);
    expect(done.request_counts!.total).toBe(15);
    expect(done.request_counts!.completed + done.request_counts!.failed).toBe(15);
    const output = done.output_file_id ? lines(await fileText(client, done.output_file_id)) : [];
    const errors = lines(await fileText(client, done.error_file_id!));
    expect(output.length).toBe(done.request_counts!.completed);
    expect(errors.every((line) => line.error.code === "batch_expired")).toBe(true);
    expect([...output, ...errors].map((line) => line.custom_id).sort()).toEqual(
      input.map((line) => line.custom_id).sort(),
    );
    // Messages of lines still queued settle nothing more.
    await gateway.gateway.worker.drain();
    expect((await client.batches.retrieve(created.id)).request_counts).toEqual(done.request_counts);
  });

  it("runs through a fallback config when the first target fails", async () => {
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        { provider: "openai", api_key: "sk-a", custom_host: `${broken.url}/v1` },
        { provider: "openai", api_key: "sk-b", custom_host: `${upstream.url}/v1` },
      ],
    };
    const viaConfig = new OpenAI({
      apiKey: "unused",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { "x-gateway-api-key": workspaceKey, "x-gateway-config": JSON.stringify(config) },
    });
    const input = Array.from({ length: 4 }, (_, i) => chatLine(`f-${i}`, `fallback ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));
    const created = await viaConfig.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await waitFor(created.id, viaConfig);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 4, completed: 4, failed: 0 });
    const output = lines(await fileText(client, done.output_file_id!));
    expect(output.map((line) => line.response.body.choices[0].message.content)).toEqual(
      input.map((_, i) => `echo: fallback ${i}`),
    );
    expect(broken.requests.length).toBeGreaterThanOrEqual(4);
  });

  it("lists newest first with after and limit", async () => {
    const fileId = await uploadJsonl(client, jsonl([chatLine("l", "x")]));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++)
      ids.push(
        (
          await client.batches.create({
            input_file_id: fileId,
            endpoint: "/v1/chat/completions",
            completion_window: "24h",
          })
        ).id,
      );
    const first = await call(gateway, workspaceKey, "GET", "/v1/batches?limit=2");
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ object: "list", has_more: true, first_id: ids[2], last_id: ids[1] });
    expect(first.body.data.map((batch: any) => batch.id)).toEqual([ids[2], ids[1]]);
    const next = await call(gateway, workspaceKey, "GET", `/v1/batches?limit=2&after=${ids[1]}`);
    expect(next.body.data[0].id).toBe(ids[0]);
    for (const bad of ["limit=0", "limit=101", "limit=x"]) {
      const answer = await call(gateway, workspaceKey, "GET", `/v1/batches?${bad}`);
      expect(answer.status).toBe(400);
      expect(answer.body.error.param).toBe("limit");
    }
    // The SDK's pager walks the same list.
    const seen: string[] = [];
    for await (const batch of client.batches.list({ limit: 2 })) seen.push(batch.id);
    expect(seen.slice(0, 3)).toEqual([ids[2], ids[1], ids[0]]);
    // Another workspace sees none of them.
    expect((await call(gateway, otherKey, "GET", "/v1/batches")).body.data).toEqual([]);
  });

  it("PUT /v2/batches/:id points the batch at another output file of its workspace", async () => {
    const fileId = await uploadJsonl(client, jsonl([chatLine("p", "x")]));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const replacement = await fileStoreOf(services()).create(ownerA, {
      filename: "out.jsonl",
      purpose: "batch_output",
      body: "{}\n",
    });
    const updated = await call(gateway, workspaceKey, "PUT", `/v2/batches/${created.id}`, {
      internal_output_file_id: replacement.file.id,
    });
    expect(updated.status).toBe(200);
    expect(updated.body.output_file_id).toBe(replacement.file.id);
    // The change is in the organisation's audit log.
    const audit = await call(gateway, gateway.adminKey, "GET", "/v1/audit-logs?limit=50");
    expect(audit.body.data).toContainEqual(
      expect.objectContaining({
        action: "update",
        resource_type: "batch",
        resource_id: created.id,
      }),
    );
    const foreign = await fileStoreOf(services()).create(ownerB, {
      filename: "b.jsonl",
      purpose: "batch_output",
      body: "{}\n",
    });
    const refused = await call(gateway, workspaceKey, "PUT", `/v2/batches/${created.id}`, {
      internal_output_file_id: foreign.file.id,
    });
    expect(refused.status).toBe(404);
    expect(refused.body.error.param).toBe("internal_output_file_id");
    expect((await call(gateway, workspaceKey, "PUT", `/v2/batches/${created.id}`, {})).status).toBe(400);
  });

  it("keeps batches and input files to their workspace", async () => {
    const fileId = await uploadJsonl(client, jsonl([chatLine("i", "x")]));
    const created = await clientA.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    for (const [method, path] of [
      ["GET", `/v1/batches/${created.id}`],
      ["POST", `/v1/batches/${created.id}/cancel`],
    ] as const) {
      const answer = await call(gateway, otherKey, method, path);
      expect(answer.status).toBe(404);
    }
    await expect(
      clientB.batches.create({ input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    ).rejects.toMatchObject({ status: 404, param: "input_file_id" });
    expect((await call(gateway, otherKey, "GET", "/v1/batches/batch_nonexistent")).status).toBe(404);
  });

  it("checks the create body, the input file and the routing", async () => {
    const fileId = await uploadJsonl(client, jsonl([chatLine("v", "x")]));
    const tuning = await uploadJsonl(client, jsonl([chatLine("v", "x")]), "fine-tune");
    const post = (body: unknown, key = workspaceKey, headers: Record<string, string> = {}) =>
      call(gateway, key, "POST", "/v1/batches", body, {
        "x-gateway-provider": "openai",
        authorization: "Bearer sk-upstream",
        "x-gateway-custom-host": `${upstream.url}/v1`,
        ...headers,
      });
    const base = { input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" };
    const cases: Array<[unknown, number, string]> = [
      [{ ...base, endpoint: "/v1/images" }, 400, "endpoint"],
      [{ ...base, completion_window: "2d" }, 400, "completion_window"],
      [{ ...base, completion_window: "169h" }, 400, "completion_window"],
      [
        { ...base, metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, "v"])) },
        400,
        "metadata",
      ],
      [{ ...base, input_file_id: "file-missing" }, 404, "input_file_id"],
      [{ ...base, input_file_id: tuning }, 400, "input_file_id"],
      [{ ...base, extra: 1 }, 400, ""],
    ];
    for (const [body, status, param] of cases) {
      const answer = await post(body);
      expect(answer.status, JSON.stringify(body)).toBe(status);
      if (param) expect(answer.body.error.param).toBe(param);
    }
    const noProvider = await call(gateway, workspaceKey, "POST", "/v1/batches", base);
    expect(noProvider.status).toBe(400);
    expect(noProvider.body.error.code).toBe("missing_provider");
    // DeepSeek has no batch API the gateway drives: native is impossible there.
    const native = await post(base, workspaceKey, {
      "x-gateway-batch-mode": "native",
      "x-gateway-provider": "deepseek",
    });
    expect(native.status).toBe(400);
    expect(native.body.error).toMatchObject({ code: "batch_mode_unavailable", param: "x-gateway-batch-mode" });
    expect(native.body.error.message).toContain("deepseek");
    const bogus = await post(base, workspaceKey, { "x-portkey-batch-mode": "sometimes" });
    expect(bogus.status).toBe(400);
    const configured = await call(gateway, workspaceKey, "POST", "/v1/batches", base, {
      "x-gateway-config": JSON.stringify({
        batch_mode: "native",
        strategy: { mode: "fallback" },
        targets: [
          { provider: "openai", api_key: "a" },
          { provider: "openai", api_key: "b" },
        ],
      }),
    });
    expect(configured.status).toBe(400);
    expect(configured.body.error.message).toContain("fallback");
    const nested = await call(gateway, workspaceKey, "POST", "/v1/batches", base, {
      "x-gateway-config": JSON.stringify({
        strategy: { mode: "fallback" },
        targets: [{ provider: "openai", api_key: "a", batch_mode: "gateway" }],
      }),
    });
    expect(nested.status).toBe(400);
    expect(nested.body.error.param).toContain("batch_mode");
    const gatewayMode = await post(base, workspaceKey, { "x-gateway-batch-mode": "gateway" });
    expect(gatewayMode.status).toBe(200);
  });
});
