import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Feedback, analytics, log exports and metrics against the real local gateway: a burst of concurrent chat
 * calls (some failing) leaves one log each, analytics agree with the logs, exports hold exactly the allowed
 * fields, and user keys see only their own exports.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let workspaceKey: string;
let userKeyA: string;
let userKeyB: string;
let workspaceId: string;
const BURST = 20;
const FAILING = 5;

const api = (key: string) => async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { "x-gateway-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
};

beforeAll(async () => {
  upstream = await startOpenAIMock({ chunkDelayMs: 1 });
  gateway = await startTestGateway({ ENABLE_PROMETHEUS: "1" });
  const records = gateway.gateway.services.stores.records;
  const { organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap;
  workspaceId = defaultWorkspaceId;
  const base = { organisationId, workspaceId, keyType: "workspace" as const };
  workspaceKey = (await createApiKey(records, { ...base, name: "ws service", keySubType: "service", scopes: ["*"] }))
    .secret;
  const userScopes = ["logs.export", "logs.list", "logs.view"];
  userKeyA = (
    await createApiKey(records, { ...base, name: "user a", keySubType: "user", userId: "usr_a", scopes: userScopes })
  ).secret;
  userKeyB = (
    await createApiKey(records, { ...base, name: "user b", keySubType: "user", userId: "usr_b", scopes: userScopes })
  ).secret;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function burstLogs(): Promise<any[]> {
  const { body } = await api(gateway.adminKey)("GET", "/v1/logs?limit=100&metadata_key=burst&metadata_value=1");
  return body.data;
}

describe("a burst of mixed requests", () => {
  it("leaves exactly one log per request, and analytics equal the sum of the logs", async () => {
    const client = new OpenAI({
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: {
        "x-gateway-api-key": workspaceKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/v1`,
      },
    });
    const calls = Array.from({ length: BURST }, async (_, index) => {
      const headers = {
        "x-gateway-metadata": JSON.stringify({
          burst: "1",
          _user: `user-${index % 3}`,
          team: index % 2 ? "odd" : "even",
        }),
      };
      const body = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: `Hello ${index}` }] };
      if (index < FAILING)
        return client.chat.completions.create({ ...body, temperature: 9 }, { headers }).then(
          () => "ok",
          () => "failed",
        );
      if (index % 4 === 0) {
        const stream = await client.chat.completions.create(
          { ...body, stream: true, stream_options: { include_usage: true } },
          { headers },
        );
        for await (const _ of stream) {
          // drain
        }
        return "ok";
      }
      return client.chat.completions.create(body, { headers }).then(() => "ok");
    });
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((outcome) => outcome === "failed")).toHaveLength(FAILING);

    await expect.poll(async () => (await burstLogs()).length, { timeout: 5000 }).toBe(BURST);
    const logs = await burstLogs();
    expect(new Set(logs.map((log) => log.id)).size).toBe(BURST);
    expect(new Set(logs.map((log) => log.traceId)).size).toBe(BURST);
    expect(logs.filter((log) => log.status === 400)).toHaveLength(FAILING);
    for (const log of logs.filter((entry) => entry.status === 200)) {
      expect(log).toMatchObject({ workspaceId, provider: "openai", requestedModel: "gpt-4o-mini" });
      expect(log.usage.totalTokens).toBe(log.usage.promptTokens + log.usage.completionTokens);
      expect(log.cost).toBeGreaterThan(0);
    }

    // Analytics: every request of the workspace (the burst plus nothing else made with the workspace key).
    const sum = (pick: (log: any) => number) => logs.reduce((total, log) => total + pick(log), 0);
    const workspaceApi = api(workspaceKey);
    await expect
      .poll(async () => (await workspaceApi("GET", "/v1/analytics/summary")).body.requests, { timeout: 5000 })
      .toBe(BURST);
    const { body: summary } = await workspaceApi("GET", "/v1/analytics/summary");
    expect(summary.errors).toBe(FAILING);
    expect(summary.tokens.prompt).toBe(sum((log) => log.usage?.promptTokens ?? 0));
    expect(summary.tokens.completion).toBe(sum((log) => log.usage?.completionTokens ?? 0));
    expect(summary.cost).toBeCloseTo(
      sum((log) => log.cost ?? 0),
      5,
    );
    expect(summary.users).toBe(3);

    // Percentiles from the log-bucketed sketch are within its ~5% relative error (plus rounding of tiny values).
    const latencies = logs.map((log) => log.latencyMs).sort((a, b) => a - b);
    const exact = (quantile: number) => latencies[Math.max(0, Math.ceil(quantile * latencies.length) - 1)]!;
    for (const [name, quantile] of [
      ["p50", 0.5],
      ["p90", 0.9],
      ["p99", 0.99],
    ] as const) {
      expect(Math.abs(summary.latency[name] - exact(quantile))).toBeLessThanOrEqual(exact(quantile) * 0.1 + 1);
    }

    const now = Date.now();
    const range = `time_of_generation_min=${new Date(now - 3_600_000).toISOString()}&time_of_generation_max=${new Date(now + 60_000).toISOString()}`;
    const { body: graph } = await workspaceApi("GET", `/v1/analytics/graphs/requests?${range}`);
    expect(graph.resolution).toBe("hour");
    expect(graph.data_points.reduce((total: number, point: any) => total + point.total, 0)).toBe(BURST);
    const { body: tokens } = await workspaceApi("GET", `/v1/analytics/graphs/tokens?${range}&model=gpt-4o-mini`);
    expect(tokens.summary.total).toBe(sum((log) => log.usage?.totalTokens ?? 0));
    const { body: errors } = await workspaceApi("GET", `/v1/analytics/graphs/errors?${range}`);
    expect(errors.summary).toMatchObject({ total: FAILING, requests: BURST });
    const { body: month } = await workspaceApi(
      "GET",
      `/v1/analytics/graphs/cost?from=${new Date(now - 30 * 86_400_000).toISOString()}`,
    );
    expect(month.resolution).toBe("day");
    expect(month.data_points.length).toBeGreaterThanOrEqual(30);
    expect(month.summary.total).toBeCloseTo(summary.cost, 5);

    const { body: users } = await workspaceApi("GET", "/v1/analytics/groups/users");
    expect(users.data.map((row: any) => row.user).sort()).toEqual(["user-0", "user-1", "user-2"]);
    const { body: teams } = await workspaceApi("GET", "/v1/analytics/groups/metadata?metadata_key=team");
    expect(Object.fromEntries(teams.data.map((row: any) => [row.value, row.requests]))).toEqual({ even: 10, odd: 10 });
    const { body: models } = await workspaceApi("GET", "/v1/analytics/groups/model");
    expect(models.data.reduce((total: number, row: any) => total + row.requests, 0)).toBe(BURST);

    // Organisation keys see every workspace (the admin key's own requests included); other workspaces are refused.
    const { body: org } = await api(gateway.adminKey)("GET", "/v1/analytics/summary");
    expect(org.requests).toBeGreaterThanOrEqual(BURST);
    expect((await workspaceApi("GET", "/v1/analytics/summary?workspace_id=ws_other")).status).toBe(403);
    expect((await api(userKeyA)("GET", "/v1/analytics/summary")).status).toBe(403);
  });
});

describe("feedback", () => {
  it("is created and updated with workspace keys only, and counted into analytics", async () => {
    const admin = await api(gateway.adminKey)("POST", "/v1/feedback", { trace_id: "trace-1", value: 5 });
    expect(admin.status).toBe(403);
    const workspaceApi = api(workspaceKey);
    expect((await workspaceApi("POST", "/v1/feedback", { trace_id: "trace-1", value: 11 })).status).toBe(400);
    expect((await workspaceApi("POST", "/v1/feedback", { trace_id: "trace-1", value: 1.5 })).status).toBe(400);
    const tooMuch = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, "v"]));
    expect(
      (await workspaceApi("POST", "/v1/feedback", { trace_id: "trace-1", value: 1, metadata: tooMuch })).status,
    ).toBe(400);

    const created = await workspaceApi("POST", "/v1/feedback", {
      trace_id: "trace-1",
      value: 8,
      weight: 0.5,
      metadata: { source: "thumbs" },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: "feedback", value: 8, weight: 0.5, trace_id: "trace-1" });
    await workspaceApi("POST", "/v1/feedback", { trace_id: "trace-2", value: -2 });
    const updated = await workspaceApi("PUT", `/v1/feedback/${created.body.id}`, { value: 4, weight: 1 });
    expect(updated.status).toBe(200);
    expect(updated.body.value).toBe(4);
    expect((await api(gateway.adminKey)("PUT", `/v1/feedback/${created.body.id}`, { value: 1 })).status).toBe(403);

    const { body: graph } = await workspaceApi("GET", "/v1/analytics/graphs/feedback");
    // Weighted mean of (4 x 1) and (-2 x 1).
    expect(graph.summary).toEqual({ total: 2, avg_value: 1 });
  });
});

describe("log exports", () => {
  it("exports the logs that match, with only the allowed fields, for the key's user only", async () => {
    const records = gateway.gateway.services.stores.records;
    const organisationId = gateway.gateway.bootstrap.organisationId;
    await records.update(`ORG#${organisationId}`, "ORG", {
      set: { settings: { log_export_denied_fields: ["headers", "request"] } },
    });
    const userA = api(userKeyA);

    const restrictions = await userA("GET", `/v1/logs/exports/field-restrictions?workspace_id=${workspaceId}`);
    expect(restrictions.body).toMatchObject({ denied_fields: ["headers", "request"], source: "organisation" });

    const denied = await userA("POST", "/v1/logs/exports", {
      requested_data: ["id", "headers"],
      filters: { metadata_key: "burst", metadata_value: "1" },
    });
    expect(denied.status).toBe(400);
    expect(denied.body.error.code).toBe("denied_export_field");
    expect((await userA("POST", "/v1/logs/exports", { requested_data: ["id", "no_such_field"] })).status).toBe(400);

    const fields = ["id", "status", "cost", "requested_model", "response"];
    const created = await userA("POST", "/v1/logs/exports", {
      description: "burst",
      requested_data: ["id", "status"],
      filters: { metadata_key: "burst", metadata_value: "1" },
    });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe("draft");
    const id = created.body.id;
    expect((await userA("PUT", `/v1/logs/exports/${id}`, { requested_data: ["id", "request"] })).status).toBe(400);
    expect((await userA("PUT", `/v1/logs/exports/${id}`, { requested_data: fields })).body.requested_data).toEqual(
      fields,
    );
    expect((await userA("GET", `/v1/logs/exports/${id}/download`)).status).toBe(409);

    const started = await userA("POST", `/v1/logs/exports/${id}/start`);
    expect(started.status).toBe(202);
    expect(started.body.status).toBe("queued");
    expect((await userA("PUT", `/v1/logs/exports/${id}`, { description: "late" })).status).toBe(409);
    await gateway.gateway.worker.drain();
    await expect
      .poll(async () => (await userA("GET", `/v1/logs/exports/${id}`)).body.status, { timeout: 5000 })
      .toBe("success");
    expect((await userA("GET", `/v1/logs/exports/${id}`)).body.total_lines).toBe(BURST);

    const download = await userA("GET", `/v1/logs/exports/${id}/download`);
    expect(download.status).toBe(200);
    // The local server's public URL is fixed before a free port is chosen (PORT=0): point it at this server.
    const signed = new URL(download.body.signed_url);
    const signedUrl = `${gateway.url}${signed.pathname}${signed.search}`;
    const file = await fetch(signedUrl);
    expect(file.status).toBe(200);
    const lines = (await file.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(BURST);
    for (const line of lines) expect(Object.keys(line).sort()).toEqual([...fields].sort());
    expect(lines.filter((line) => line.status === 400)).toHaveLength(FAILING);
    expect(lines.find((line) => line.status === 200).response.object).toBe("chat.completion");

    // A tampered or foreign link is refused; keys cannot walk out of the blob folder.
    const tampered = signedUrl.replace(/signature=[0-9a-f]/, (match: string) =>
      match.endsWith("0") ? `${match.slice(0, -1)}1` : `${match.slice(0, -1)}0`,
    );
    expect((await fetch(tampered)).status).toBe(403);
    expect(
      (
        await fetch(
          `${gateway.url}/_blobs/exports/%2E%2E%2F%2E%2E%2Fmaster.key?expires=9999999999&signature=${"0".repeat(64)}`,
        )
      ).status,
    ).toBe(403);
    const expired = new URL(signedUrl);
    expired.searchParams.set("expires", "1");
    expect((await fetch(expired)).status).toBe(403);

    // Redelivery of the job is harmless (idempotent): the export stays as it is.
    await gateway.gateway.services.stores.queue.send("exports", { exportId: id, organisationId });
    await gateway.gateway.worker.drain();
    expect((await userA("GET", `/v1/logs/exports/${id}`)).body).toMatchObject({
      status: "success",
      total_lines: BURST,
    });

    // User keys see only their own exports; the admin sees all.
    const userB = api(userKeyB);
    expect((await userB("GET", "/v1/logs/exports")).body.data.map((entry: any) => entry.id)).not.toContain(id);
    expect((await userB("GET", `/v1/logs/exports/${id}`)).status).toBe(404);
    expect((await userB("POST", `/v1/logs/exports/${id}/cancel`)).status).toBe(404);
    expect((await userA("GET", "/v1/logs/exports")).body.data.map((entry: any) => entry.id)).toContain(id);
    expect((await api(gateway.adminKey)("GET", "/v1/logs/exports")).body.data.map((entry: any) => entry.id)).toContain(
      id,
    );

    // Cancel a queued export: the worker then skips it.
    const second = await userB("POST", "/v1/logs/exports", { requested_data: ["id"] });
    await userB("POST", `/v1/logs/exports/${second.body.id}/start`);
    expect((await userB("POST", `/v1/logs/exports/${second.body.id}/cancel`)).body.status).toBe("cancelled");
    await gateway.gateway.worker.drain();
    expect((await userB("GET", `/v1/logs/exports/${second.body.id}`)).body.status).toBe("cancelled");

    // A workspace override replaces the organisation's list.
    const workspace = (await records.get(`WORKSPACE#${workspaceId}`, "WORKSPACE"))!;
    await records.put({ ...workspace, log_export_denied_fields: ["cost"] });
    expect((await userA("GET", "/v1/logs/exports/field-restrictions")).body).toMatchObject({
      denied_fields: ["cost"],
      source: "workspace",
    });
    expect((await userA("POST", "/v1/logs/exports", { requested_data: ["cost"] })).status).toBe(400);
  });
});

describe("metrics", () => {
  it("serves Prometheus text when ENABLE_PROMETHEUS is set", async () => {
    for (const path of ["/metrics", "/dataservice/metrics"]) {
      const response = await fetch(`${gateway.url}${path}`);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/plain");
      const text = await response.text();
      expect(text).toMatch(
        /gateway_requests_total\{route="\/v1\/chat\/completions",provider="openai",model="gpt-4o-mini",status="200"\} \d+/,
      );
      expect(text).toContain("gateway_request_duration_seconds_bucket");
      expect(text).toContain('gateway_tokens_total{provider="openai",model="gpt-4o-mini",type="prompt"}');
      expect(text).toContain("gateway_log_store_dropped_writes 0");
    }
  });

  it("answers 404 when it is not", async () => {
    const plain = await startTestGateway();
    try {
      expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
      expect((await fetch(`${plain.url}/dataservice/metrics`)).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
