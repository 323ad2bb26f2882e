import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costOf } from "../../core/inference/catalog/cost.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Usage-limit and rate-limit policies end to end on the local platform: CRUD under /v2 and /v1, 429s in
 * OpenAI's shape with rate-limit headers, exact admission under concurrency, cost limits from catalog prices,
 * streamed usage counted when the stream ends, limits on API keys, raised limits, and non-matching conditions.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let workspaceId: string;

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway();
  workspaceId = (await seedWorkspace(gateway, "Policies")).id;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const admin = (method: string, path: string, body?: unknown) => call(gateway, gateway.adminKey, method, path, body);

async function workspaceKey(extra: Record<string, unknown> = {}) {
  return createKey(gateway, gateway.adminKey, "workspace", "service", {
    name: "policy test key",
    workspace_id: workspaceId,
    scopes: ["policies.create", "policies.read", "policies.list", "policies.update", "policies.delete"],
    ...extra,
  });
}

async function chat(key: string, options: { model?: string; stream?: boolean; metadata?: unknown } = {}) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      authorization: "Bearer sk-upstream",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      ...(options.metadata ? { "x-gateway-metadata": JSON.stringify(options.metadata) } : {}),
    },
    body: JSON.stringify({
      model: options.model ?? "gpt-4o-mini",
      messages: [{ role: "user", content: "Say hello" }],
      ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: safeJson(text) };
}

function safeJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Waits until a policy's usage (for the only group) reaches `at least`. */
async function usageOf(path: string, atLeast: number): Promise<number> {
  let value = 0;
  for (let i = 0; i < 100; i++) {
    const answer = await admin("GET", `${path}/usage`);
    value = answer.body.data?.[0]?.usage ?? 0;
    if (value >= atLeast - 1e-5) return value; // cost is counted in micro-dollars
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return value;
}

describe("policy routes", () => {
  it("creates, reads, lists, updates and deletes usage-limit policies (v2 and v1 paths)", async () => {
    const created = await admin("POST", "/v2/policies/usage-limits", {
      name: "Monthly cost per key",
      conditions: [{ key: "workspace_id", value: workspaceId }],
      group_by: [{ key: "api_key" }],
      type: "cost",
      credit_limit: 10,
      alert_threshold: 8,
      periodic_reset: "monthly",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "policy_usage_limits",
      type: "cost",
      credit_limit: 10,
      periodic_reset: "monthly",
      timezone: "UTC",
      conditions: [{ key: "workspace_id", value: workspaceId }],
      group_by: [{ key: "api_key" }],
    });
    const id = created.body.id;
    expect((await admin("GET", `/v1/policies/usage-limits/${id}`)).body.id).toBe(id);
    const listed = await admin("GET", "/v2/policies/usage-limits");
    expect(listed.body.data.map((policy: any) => policy.id)).toContain(id);

    const updated = await admin("PUT", `/v2/policies/usage-limits/${id}`, {
      credit_limit: 20,
      conditions: [{ key: "model", value: ["gpt-4o", "gpt-4o-mini"] }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      credit_limit: 20,
      conditions: [{ key: "model", value: ["gpt-4o", "gpt-4o-mini"] }],
    });
    expect((await admin("PUT", `/v2/policies/usage-limits/${id}`, { type: "tokens" })).status).toBe(400);

    const audit = await admin("GET", `/v1/audit-logs?resource_id=${id}`);
    expect(audit.body.data.map((entry: any) => entry.action).sort()).toEqual(["create", "update"]);

    expect((await admin("DELETE", `/v2/policies/usage-limits/${id}`)).body).toMatchObject({ deleted: true });
    expect((await admin("GET", `/v2/policies/usage-limits/${id}`)).status).toBe(404);
  });

  it("validates bodies", async () => {
    const bad = [
      { type: "cost" },
      { type: "dollars", credit_limit: 1 },
      { type: "cost", credit_limit: 1, conditions: [{ key: "colour", value: "red" }] },
      { type: "cost", credit_limit: 1, periodic_reset: "yearly" },
      { type: "cost", credit_limit: 1, timezone: "Mars/Olympus" },
      { type: "cost", credit_limit: 1, alert_threshold: 2 },
    ];
    for (const body of bad) expect((await admin("POST", "/v2/policies/usage-limits", body)).status).toBe(400);
    expect((await admin("POST", "/v2/policies/rate-limits", { unit: "rpw", value: 1 })).status).toBe(400);
  });

  it("lets workspace keys manage only their workspace's policies", async () => {
    const other = await seedWorkspace(gateway, "Other");
    const mine = await workspaceKey();
    const created = await call(gateway, mine.key, "POST", "/v2/policies/rate-limits", {
      type: "requests",
      unit: "rpm",
      value: 1000,
    });
    expect(created.status).toBe(201);
    expect(created.body.workspace_id).toBe(workspaceId);
    const foreign = await admin("POST", "/v2/policies/rate-limits", {
      workspace_id: other.id,
      unit: "rpm",
      value: 1000,
    });
    expect(foreign.status).toBe(201);
    expect((await call(gateway, mine.key, "GET", `/v2/policies/rate-limits/${foreign.body.id}`)).status).toBe(404);
    const listed = await call(gateway, mine.key, "GET", "/v2/policies/rate-limits");
    expect(listed.body.data.every((policy: any) => policy.workspace_id === workspaceId)).toBe(true);
    expect(
      (
        await call(gateway, mine.key, "POST", "/v2/policies/rate-limits", {
          workspace_id: other.id,
          unit: "rpm",
          value: 1,
        })
      ).status,
    ).toBe(403);
    const noScope = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "no scopes",
      workspace_id: workspaceId,
      scopes: [],
    });
    expect((await call(gateway, noScope.key, "GET", "/v2/policies/rate-limits")).status).toBe(403);
    await admin("DELETE", `/v2/policies/rate-limits/${created.body.id}`);
    await admin("DELETE", `/v2/policies/rate-limits/${foreign.body.id}`);
  });
});

describe("enforcement on inference requests", () => {
  it("refuses with 429, rate-limit headers and a message naming the policy", async () => {
    const key = await workspaceKey();
    const policy = await admin("POST", "/v2/policies/rate-limits", {
      name: "Three a day",
      conditions: [{ key: "api_key", value: key.id }],
      group_by: [{ key: "api_key" }],
      type: "requests",
      unit: "rpd",
      value: 3,
    });
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push(await chat(key.key));
    expect(answers.slice(0, 3).map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers[0]!.headers.get("x-ratelimit-limit")).toBe("3");
    expect(answers[2]!.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(answers[0]!.headers.get("x-ratelimit-reset"))).toBeGreaterThan(0);
    const refused = answers[3]!;
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(refused.body.error.message).toContain("Three a day");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");

    const usage = await admin("GET", `/v2/policies/rate-limits/${policy.body.id}/usage`);
    expect(usage.body.data).toEqual([
      expect.objectContaining({ group: { api_key: key.id }, usage: 3, limit: 3, remaining: 0, exhausted: true }),
    ]);
    await admin("DELETE", `/v2/policies/rate-limits/${policy.body.id}`);
  });

  it("admits exactly 100 of 500 concurrent requests", async () => {
    const key = await workspaceKey();
    const policy = await admin("POST", "/v2/policies/rate-limits", {
      conditions: [{ key: "api_key", value: key.id }],
      unit: "rpd",
      value: 100,
    });
    const statuses = await Promise.all(
      Array.from({ length: 500 }, () => chat(key.key).then((answer) => answer.status)),
    );
    expect(statuses.filter((status) => status === 200)).toHaveLength(100);
    expect(statuses.filter((status) => status === 429)).toHaveLength(400);
    await admin("DELETE", `/v2/policies/rate-limits/${policy.body.id}`);
  });

  it("stops a key after the expected number of calls given the catalog price, and a raise re-enables it", async () => {
    const key = await workspaceKey();
    const probe = await chat(key.key);
    const perCall = costOf("openai", "gpt-4o-mini", probe.body.usage).total;
    expect(perCall).toBeGreaterThan(0);
    const policy = await admin("POST", "/v2/policies/usage-limits", {
      name: "Small budget",
      conditions: [{ key: "api_key", value: key.id }],
      group_by: [{ key: "api_key" }],
      type: "cost",
      credit_limit: perCall * 2.5,
    });
    const path = `/v2/policies/usage-limits/${policy.body.id}`;
    let admitted = 0;
    for (let i = 0; i < 6; i++) {
      const answer = await chat(key.key);
      if (answer.status !== 200) {
        expect(answer.status).toBe(429);
        expect(answer.body.error).toMatchObject({ type: "rate_limit_error", code: "usage_limit_exceeded" });
        expect(answer.body.error.message).toContain("Small budget");
        break;
      }
      admitted += 1;
      await usageOf(path, perCall * admitted); // counted after the response
    }
    expect(admitted).toBe(3);
    expect((await admin("PUT", path, { credit_limit: perCall * 10 })).status).toBe(200);
    expect((await chat(key.key)).status).toBe(200);
  });

  it("counts a streamed request's tokens when the stream ends", async () => {
    const key = await workspaceKey();
    const policy = await admin("POST", "/v2/policies/usage-limits", {
      conditions: [{ key: "api_key", value: key.id }],
      type: "tokens",
      credit_limit: 1_000_000,
      periodic_reset: "daily",
    });
    const answer = await chat(key.key, { stream: true });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain("[DONE]");
    const tokens = await usageOf(`/v2/policies/usage-limits/${policy.body.id}`, 1);
    expect(tokens).toBeGreaterThan(0);
    await admin("DELETE", `/v2/policies/usage-limits/${policy.body.id}`);
  });

  it("buckets by the request model and leaves non-matching requests untouched", async () => {
    const key = await workspaceKey();
    const policy = await admin("POST", "/v2/policies/rate-limits", {
      conditions: [
        { key: "api_key", value: key.id },
        { key: "model", value: "gpt-4o" },
      ],
      group_by: [{ key: "model" }, { key: "metadata.team" }],
      unit: "rpd",
      value: 1,
    });
    const other = await chat(key.key, { model: "gpt-4o-mini" });
    expect(other.status).toBe(200);
    expect(other.headers.get("x-ratelimit-limit")).toBeNull();
    expect((await chat(key.key, { model: "gpt-4o", metadata: { team: "a" } })).status).toBe(200);
    expect((await chat(key.key, { model: "gpt-4o", metadata: { team: "b" } })).status).toBe(200);
    expect((await chat(key.key, { model: "gpt-4o", metadata: { team: "a" } })).status).toBe(429);
    const usage = await admin("GET", `/v2/policies/rate-limits/${policy.body.id}/usage`);
    expect(
      usage.body.data.map((entry: any) => entry.group).sort((a: any, b: any) => (a.team < b.team ? -1 : 1)),
    ).toEqual([
      { model: "gpt-4o", "metadata.team": "a" },
      { model: "gpt-4o", "metadata.team": "b" },
    ]);
    await admin("DELETE", `/v2/policies/rate-limits/${policy.body.id}`);
  });

  it("applies to pass-through requests too", async () => {
    const key = await workspaceKey({ rate_limits: { unit: "rpd", value: 1 } });
    const proxy = () =>
      fetch(`${gateway.url}/v1/proxy/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gateway-api-key": key.key,
          "x-gateway-provider": "openai",
          authorization: "Bearer sk-upstream",
          "x-gateway-custom-host": `${upstream.url}/v1`,
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }),
      });
    const first = await proxy();
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("0");
    await first.text();
    const second = await proxy();
    expect(second.status).toBe(429);
    expect((await second.json()).error.code).toBe("rate_limit_exceeded");
  });

  it("applies limits set on an API key as policies of that key", async () => {
    const key = await workspaceKey({ rate_limits: { unit: "rpd", value: 1 } });
    expect((await chat(key.key)).status).toBe(200);
    expect((await chat(key.key)).status).toBe(429);
    const listed = await admin("GET", `/v2/policies/rate-limits?api_key_id=${key.id}`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({ api_key_id: key.id, unit: "rpd", value: 1 });

    // Raising it on the key keeps the policy (and its count): one more request, then refused again.
    const updated = await admin("PUT", `/v1/api-keys/${key.id}`, {
      rate_limits: { unit: "rpd", value: 2 },
      usage_limits: { type: "requests", credit_limit: 100 },
    });
    expect(updated.status).toBe(200);
    expect((await admin("GET", `/v2/policies/rate-limits?api_key_id=${key.id}`)).body.data[0].id).toBe(
      listed.body.data[0].id,
    );
    expect((await chat(key.key)).status).toBe(200);
    expect((await chat(key.key)).status).toBe(429);
    expect((await admin("GET", `/v2/policies/usage-limits?api_key_id=${key.id}`)).body.data).toHaveLength(1);

    await admin("PUT", `/v1/api-keys/${key.id}`, { rate_limits: null });
    expect((await admin("GET", `/v2/policies/rate-limits?api_key_id=${key.id}`)).body.data).toHaveLength(0);
    expect((await chat(key.key)).status).toBe(200);
    expect(
      (
        await admin("POST", "/v1/api-keys/workspace/service", {
          name: "x",
          workspace_id: workspaceId,
          rate_limits: { unit: "rpm" },
        })
      ).status,
    ).toBe(400);
  });
});
