import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * What the `portkey-ai` SDK sends, unmodified (issue 40 item 8): a config of only `cache` or `retry` beside the
 * provider (or a virtual key) in headers takes its provider from the headers, as Portkey's gateway does; the
 * control-plane methods that repeat a path id in the body (admin.workspaces.users.create / update,
 * logs.exports.update, feedback.update, configs.update on a config saved without a slug) are accepted, and a body
 * id naming another resource answers 400.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let workspaceId: string;
const messages = [{ role: "user" as const, content: "Hi" }];

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([startTestGateway(), startOpenAIMock()]);
  workspaceId = (await seedWorkspace(gateway, "Portkey SDK")).id;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const portkey = (options: Record<string, unknown>, apiKey = gateway.adminKey) =>
  new Portkey({ apiKey, baseURL: `${gateway.url}/v1`, maxRetries: 0, ...options } as never);

describe("a config of settings only, the provider in headers", () => {
  it("cache: the provider from x-portkey-provider, the second call a hit", async () => {
    upstream.reset();
    const client = portkey({
      provider: "openai",
      Authorization: "Bearer sk-upstream",
      customHost: `${upstream.url}/v1`,
      config: { cache: { mode: "simple", max_age: 60 } },
    });
    const first: any = await client.chat.completions.create({ model: "gpt-4o-mini", messages });
    const second: any = await client.chat.completions.create({ model: "gpt-4o-mini", messages });
    expect(second.choices[0].message.content).toBe(first.choices[0].message.content);
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.lastRequest()!.headers.authorization).toBe("Bearer sk-upstream");
  });

  it("retry: a failed first call is retried on the provider the headers name", async () => {
    upstream.reset();
    upstream.setFault({ status: 503, times: 1 });
    const client = portkey({
      provider: "openai",
      Authorization: "Bearer sk-upstream",
      customHost: `${upstream.url}/v1`,
      config: { retry: { attempts: 2, on_status_codes: [503] } },
    });
    const answer: any = await client.chat.completions.create({ model: "gpt-4o-mini", messages });
    expect(answer.choices[0].message.content).toBeTruthy();
    expect(upstream.requests).toHaveLength(2);
  });

  it("a virtual key in headers with a cache-only config", async () => {
    const saved = await call(gateway, gateway.adminKey, "POST", "/v1/virtual-keys", {
      name: "portkey sdk",
      slug: "portkey-sdk-vk",
      provider: "openai",
      key: "sk-saved-upstream",
      custom_host: `${upstream.url}/v1`,
      workspace_id: workspaceId,
    });
    expect(saved.status, saved.text).toBe(201);
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "portkey sdk",
      workspace_id: workspaceId,
      scopes: ["completions.write"],
    });
    upstream.reset();
    const client = portkey({ virtualKey: "portkey-sdk-vk", config: { cache: { mode: "simple" } } }, key.key);
    await client.chat.completions.create({ model: "gpt-4o-mini", messages });
    await client.chat.completions.create({ model: "gpt-4o-mini", messages });
    expect(upstream.requests).toHaveLength(1);
    expect(upstream.lastRequest()!.headers.authorization).toBe("Bearer sk-saved-upstream");
  });

  it("without a provider in the headers, the settings-only config answers 400 missing_provider", async () => {
    const client = portkey({ config: { cache: { mode: "simple" } } });
    await expect(client.chat.completions.create({ model: "gpt-4o-mini", messages })).rejects.toMatchObject({
      status: 400,
    });
  });
});

describe("control-plane methods that repeat the path id in the body", () => {
  it("admin.workspaces.users.create and .update", async () => {
    const user = await seedUser(gateway, `portkey-sdk-${Date.now()}@example.com`);
    const client = portkey({});
    const added: any = await client.admin.workspaces.users.create({
      workspaceId,
      users: [{ id: user.id, role: "member" }],
    });
    expect(added.data[0]).toMatchObject({ role: "member" });
    const updated: any = await client.admin.workspaces.users.update({ workspaceId, userId: user.id, role: "manager" });
    expect(updated).toMatchObject({ role: "manager" });
    // The same body naming another user than the path: refused, nothing changed.
    const mismatch = await call(
      gateway,
      gateway.adminKey,
      "PUT",
      `/v1/admin/workspaces/${workspaceId}/users/${user.id}`,
      { user_id: "usr_someone_else", role: "member" },
    );
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error).toMatchObject({ param: "user_id", code: "id_mismatch" });
    const read = await call(gateway, gateway.adminKey, "GET", `/v1/admin/workspaces/${workspaceId}/users/${user.id}`);
    expect(read.body.role).toBe("manager");
  });

  it("logs.exports.update", async () => {
    const client = portkey({});
    const created: any = await client.logs.exports.create({ workspaceId, requestedData: ["id", "status"] } as never);
    const updated: any = await client.logs.exports.update({
      exportId: created.id,
      workspaceId,
      requestedData: ["id", "status", "requested_model"],
    });
    expect(updated.requested_data).toEqual(["id", "status", "requested_model"]);
    const other = await seedWorkspace(gateway, "Portkey SDK other");
    const mismatch = await call(gateway, gateway.adminKey, "PUT", `/v1/logs/exports/${created.id}`, {
      workspace_id: other.id,
      requested_data: ["id"],
    });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.param).toBe("workspace_id");
  });

  it("feedback.create and feedback.update", async () => {
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "feedback",
      workspace_id: workspaceId,
      scopes: ["feedback.create", "feedback.update"],
    });
    const client = portkey({}, key.key);
    const created: any = await client.feedback.create({ traceID: "trace-portkey-sdk", value: 1 });
    const id = created.feedback_ids[0];
    expect(created.trace_id).toBe("trace-portkey-sdk");
    const updated: any = await client.feedback.update({ feedbackID: id, value: 5, weight: 0.5 });
    expect(updated).toMatchObject({ id, value: 5, weight: 0.5 });
    const mismatch = await call(gateway, key.key, "PUT", `/v1/feedback/${id}`, { feedback_id: "fb_other", value: 2 });
    expect(mismatch.status).toBe(400);
    expect(mismatch.body.error.param).toBe("feedback_id");
  });

  it("configs.update on a config saved without a slug (its id in the path and the body)", async () => {
    const client = portkey({});
    const created: any = await client.configs.create({
      name: "no slug",
      config: { retry: { attempts: 1 } },
      workspace_id: workspaceId,
    });
    expect(created.slug ?? null).toBeNull();
    const updated: any = await client.configs.update({ slug: created.id, name: "renamed", status: "active" });
    expect(updated).toMatchObject({ id: created.id, name: "renamed", slug: null });
  });
});
