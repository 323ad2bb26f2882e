import OpenAI from "openai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Providers (`/v1/providers`) through the portkey-ai SDK's `providers.*`, unmodified: a workspace's named handle on
 * an integration it may use, which requests name as `@slug`; kept to its workspace, refused once expired.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let wsA: { id: string };
let wsB: { id: string };
let keyA: string;
let keyB: string;
let integrationId: string;

const SCOPES = ["providers.create", "providers.read", "providers.list", "providers.update", "providers.delete"];

beforeAll(async () => {
  [upstream, gateway] = await Promise.all([startOpenAIMock({ reply: "from the provider" }), startTestGateway()]);
  wsA = await seedWorkspace(gateway, "Providers A");
  wsB = await seedWorkspace(gateway, "Providers B");
  const keyOf = async (workspace: { id: string }, name: string) =>
    (
      await createKey(gateway, gateway.adminKey, "workspace", "service", {
        name,
        workspace_id: workspace.id,
        scopes: [...SCOPES, "completions.write", "audit_logs.list"],
      })
    ).key;
  [keyA, keyB] = await Promise.all([keyOf(wsA, "providers a"), keyOf(wsB, "providers b")]);
  // An organisation-level integration enabled for both workspaces.
  const created = await call(gateway, gateway.adminKey, "POST", "/v1/integrations", {
    name: "Shared OpenAI",
    slug: "shared-openai",
    ai_provider_id: "openai",
    key: "sk-shared-secret",
    configurations: { custom_host: `${upstream.url}/v1` },
  });
  expect(created.status).toBe(201);
  integrationId = created.body.id;
  const access = await call(gateway, gateway.adminKey, "PUT", `/v1/integrations/${integrationId}/workspaces`, {
    workspace_ids: [wsA.id, wsB.id],
  });
  expect(access.status).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const portkeyFor = (apiKey: string) => new Portkey({ apiKey, baseURL: `${gateway.url}/v1` });

function chat(apiKey: string, provider: string) {
  const client = new OpenAI({
    apiKey: "unused",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": apiKey, "x-gateway-provider": provider },
  });
  return client.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });
}

describe("providers", () => {
  it("creates, lists, retrieves, updates and deletes with the portkey-ai SDK, and serves requests as @slug", async () => {
    const portkey = portkeyFor(keyA);
    const created = await portkey.providers.create({
      name: "Team OpenAI",
      integration_id: integrationId,
      slug: "team-a-openai",
    });
    expect(created).toMatchObject({ slug: "team-a-openai" });
    expect(created.id).toMatch(/^prv_/);

    const list = await portkey.providers.list();
    expect(list.data?.map((item) => item.slug)).toContain("team-a-openai");
    const one = await portkey.providers.retrieve({ slug: "team-a-openai" });
    expect(one).toMatchObject({ name: "Team OpenAI", integration_id: integrationId, workspace_id: wsA.id });
    expect(JSON.stringify(one)).not.toContain("sk-shared-secret");

    const answer = await chat(keyA, "@team-a-openai");
    expect(answer.choices[0]?.message.content).toBe("from the provider");
    expect(upstream.requests.at(-1)?.headers.authorization).toBe("Bearer sk-shared-secret");

    await portkey.providers.update({ slug: "team-a-openai", name: "Renamed", note: "for team A" });
    expect(await portkey.providers.retrieve({ slug: "team-a-openai" })).toMatchObject({
      name: "Renamed",
      note: "for team A",
    });

    const audit = await call(gateway, gateway.adminKey, "GET", "/v1/audit-logs?resource_type=provider");
    expect(audit.body.data.map((entry: { action: string }) => entry.action)).toEqual(
      expect.arrayContaining(["create", "update"]),
    );

    await portkey.providers.delete({ slug: "team-a-openai" });
    await expect(chat(keyA, "@team-a-openai")).rejects.toMatchObject({ status: 404 });
  });

  it("keeps a provider to its workspace: another workspace can neither see nor use it", async () => {
    await portkeyFor(keyA).providers.create({ name: "Mine", integration_id: integrationId, slug: "only-a" });
    const other = await call(gateway, keyB, "GET", "/v1/providers/only-a");
    expect(other.status).toBe(404);
    const list = await call(gateway, keyB, "GET", "/v1/providers");
    expect(list.body.data.map((item: { slug: string }) => item.slug)).not.toContain("only-a");
    await expect(chat(keyB, "@only-a")).rejects.toMatchObject({ status: 404 });
    expect((await call(gateway, keyB, "DELETE", "/v1/providers/only-a")).status).toBe(404);
    expect((await chat(keyA, "@only-a")).choices[0]?.message.content).toBe("from the provider");
  });

  it("stops serving an expired provider", async () => {
    const soon = new Date(Date.now() + 1500).toISOString();
    await portkeyFor(keyA).providers.create({
      name: "Short",
      integration_id: integrationId,
      slug: "short-lived",
      expires_at: soon,
    });
    expect((await chat(keyA, "@short-lived")).choices[0]?.message.content).toBe("from the provider");
    await new Promise((resolve) => setTimeout(resolve, 1800));
    await expect(chat(keyA, "@short-lived")).rejects.toMatchObject({ status: 404 });
  });

  it("refuses bad bodies naming the param, unusable integrations, taken slugs, and limits it would not enforce", async () => {
    const missing = await call(gateway, keyA, "POST", "/v1/providers", { name: "x" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe("integration_id");
    const unknown = await call(gateway, keyA, "POST", "/v1/providers", { name: "x", integration_id: "int_nope" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe("integration_id");
    const taken = await call(gateway, keyA, "POST", "/v1/providers", {
      name: "x",
      integration_id: integrationId,
      slug: "shared-openai",
    });
    expect(taken.status).toBe(409);
    const limits = await call(gateway, keyA, "POST", "/v1/providers", {
      name: "x",
      integration_id: integrationId,
      usage_limits: { credit_limit: 10 },
    });
    expect(limits.status).toBe(400);
    expect(limits.body.error.param).toBe("usage_limits");
    // An organisation key must say which workspace the provider belongs to.
    const orgWide = await call(gateway, gateway.adminKey, "POST", "/v1/providers", {
      name: "x",
      integration_id: integrationId,
    });
    expect(orgWide.status).toBe(400);
    expect(orgWide.body.error.param).toBe("workspace_id");
  });
});
