import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { workspaceStore } from "../../core/control/saved-resources.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Saved configs, integrations (saved providers) and virtual keys end to end: created through the admin routes,
 * used by the official openai client through x-gateway-config / x-gateway-provider: @slug /
 * x-gateway-virtual-key, against mock upstreams. Provider keys must never be readable anywhere.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let failing: OpenAIMock;
const INTEGRATION_KEY = "sk-integration-secret-7f3a9c2e1b";
const VIRTUAL_KEY = "sk-virtual-key-secret-4d8e6a0f9c";
const messages = [{ role: "user" as const, content: "Hi" }];

beforeAll(async () => {
  upstream = await startOpenAIMock();
  failing = await startOpenAIMock();
  failing.setFault({ status: 500 });
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await failing?.close();
});

async function api(
  method: string,
  path: string,
  body?: unknown,
  key = gateway.adminKey,
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: { "x-gateway-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

function client(headers: Record<string, string>, key = gateway.adminKey): OpenAI {
  return new OpenAI({
    apiKey: "sk-client-key-not-used",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 15_000,
    defaultHeaders: { "x-gateway-api-key": key, ...headers },
  });
}

const chat = (headers: Record<string, string>, model = "gpt-4o-mini", key?: string) =>
  client(headers, key).chat.completions.create({ model, messages }).withResponse();

const orgId = () => gateway.gateway.bootstrap.organisationId;

describe("saved configs", () => {
  it("saves a fallback config and routes through it by slug and by id", async () => {
    const created = await api("POST", "/v1/configs", {
      name: "Fallback",
      slug: "fallback-cfg",
      config: {
        strategy: { mode: "fallback" },
        targets: [
          { provider: "openai", api_key: "sk-first", custom_host: `${failing.url}/v1` },
          { provider: "openai", api_key: "sk-second", custom_host: `${upstream.url}/v1` },
        ],
      },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ object: "config", slug: "fallback-cfg", version: 1 });
    expect(created.body.id).toMatch(/^pc_/);

    const failedBefore = failing.requests.length;
    const { data, response } = await chat({ "x-gateway-config": "fallback-cfg" });
    expect(data.choices[0]!.message.content).toBeTruthy();
    expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
    expect(failing.requests.length).toBe(failedBefore + 1);
    expect(upstream.lastRequest()!.headers.authorization).toBe("Bearer sk-second");

    const byId = await chat({ "x-gateway-config": created.body.id });
    expect(byId.response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");

    const unknown = await chat({ "x-gateway-config": "no-such-config" }).catch((error: unknown) => error);
    expect((unknown as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  });

  it("rejects invalid configs with a 400 naming the path inside the config", async () => {
    const invalid = await api("POST", "/v1/configs", {
      name: "Bad",
      config: { strategy: { mode: "loadbalance" }, targets: [{ provider: "openai", weight: -1 }] },
    });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.param).toBe("config.targets[0].weight");

    const unknownProvider = await api("POST", "/v1/configs", {
      name: "Bad",
      config: { targets: [{ provider: "nope" }], strategy: { mode: "fallback" } },
    });
    expect(unknownProvider.status).toBe(400);
    expect(unknownProvider.body.error.param).toBe("config.targets[0].provider");

    expect((await api("POST", "/v1/configs", { name: "No config" })).status).toBe(400);
    const duplicate = await api("POST", "/v1/configs", {
      name: "Dup",
      slug: "fallback-cfg",
      config: { provider: "openai" },
    });
    expect(duplicate.status).toBe(409);
    expect((await api("GET", "/v1/configs/pc_unknown")).status).toBe(404);
  });

  it("keeps every version", async () => {
    const created = await api("POST", "/v1/configs", {
      name: "Versioned",
      slug: "versioned",
      config: { provider: "openai", retry: { attempts: 1 } },
    });
    const updated = await api("PUT", "/v1/configs/versioned", {
      config: { provider: "openai", retry: { attempts: 2 } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.version).toBe(2);
    const versions = await api("GET", `/v1/configs/${created.body.id}/versions`);
    expect(versions.body.data.map((version: any) => version.version)).toEqual([2, 1]);
    const first = await api("GET", "/v1/configs/versioned?version=1");
    expect(first.body.config.retry.attempts).toBe(1);
    expect((await api("GET", "/v1/configs/versioned")).body.config.retry.attempts).toBe(2);
    expect((await api("GET", "/v1/configs/versioned?version=9")).status).toBe(404);
    const list = await api("GET", "/v1/configs?limit=1");
    expect(list.body.data).toHaveLength(1);
    expect(list.body.has_more).toBe(true);
  });

  it("blocks deleting a workspace's default user API key config until the default is cleared", async () => {
    const created = await api("POST", "/v1/configs", {
      name: "Default",
      slug: "ws-default",
      config: { provider: "openai" },
    });
    const workspaces = workspaceStore(gateway.gateway.services.stores.records);
    let workspace = await workspaces.create(orgId(), {
      slug: "team-a",
      name: "Team A",
      defaults: { user_api_key_config: "ws-default" },
    });
    const blocked = await api("DELETE", `/v1/configs/${created.body.id}`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.message).toContain("user_api_key_config");

    workspace = await workspaces.update(workspace, { defaults: {} });
    const deleted = await api("DELETE", `/v1/configs/${created.body.id}`);
    expect(deleted.status).toBe(200);
    expect((await api("GET", "/v1/configs/ws-default")).status).toBe(404);
    expect((await api("GET", `/v1/configs/${created.body.id}/versions`)).status).toBe(404);
  });
});

describe("integrations", () => {
  it("stores the key encrypted and calls the provider with it through @slug", async () => {
    const created = await api("POST", "/v1/integrations", {
      name: "OpenAI prod",
      slug: "openai-prod",
      ai_provider_id: "openai",
      key: INTEGRATION_KEY,
      configurations: { custom_host: `${upstream.url}/v1` },
    });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^int_/);
    expect(created.body.masked_api_key).toBe(`sk********${INTEGRATION_KEY.slice(-4)}`);
    expect(JSON.stringify(created.body)).not.toContain(INTEGRATION_KEY);

    const { data, response } = await chat({ "x-gateway-provider": "@openai-prod" });
    expect(data.choices[0]!.message.content).toBeTruthy();
    expect(response.headers.get("x-gateway-provider")).toBe("openai");
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${INTEGRATION_KEY}`);

    // In a config too.
    await client({ "x-gateway-config": JSON.stringify({ provider: "@openai-prod" }) }).chat.completions.create({
      model: "gpt-4o-mini",
      messages,
    });
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${INTEGRATION_KEY}`);

    const unknown = await chat({ "x-gateway-provider": "@missing" }).catch((error: unknown) => error);
    expect((unknown as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
  });

  it("validates provider, custom host and slug", async () => {
    const badProvider = await api("POST", "/v1/integrations", {
      name: "x",
      slug: "x1",
      ai_provider_id: "nope",
      key: "k",
    });
    expect(badProvider.status).toBe(400);
    expect(badProvider.body.error.param).toBe("ai_provider_id");
    const privateHost = await api("POST", "/v1/integrations", {
      name: "x",
      slug: "x2",
      ai_provider_id: "openai",
      configurations: { custom_host: "http://169.254.169.254/latest" },
    });
    expect(privateHost.status).toBe(400);
    expect(privateHost.body.error.param).toBe("configurations.custom_host");
    expect((await api("POST", "/v1/integrations", { name: "x", ai_provider_id: "openai" })).status).toBe(400);
    const duplicate = await api("POST", "/v1/integrations", {
      name: "x",
      slug: "openai-prod",
      ai_provider_id: "openai",
    });
    expect(duplicate.status).toBe(409);
    expect((await api("GET", "/v1/integrations/int_unknown")).status).toBe(404);
  });

  it("forwards a model's custom headers and enforces the model list", async () => {
    const set = await api("PUT", "/v1/integrations/openai-prod/integration-models", {
      models: [{ slug: "gpt-4o-mini", enabled: true, is_custom: true, custom_headers: { "x-team-route": "search" } }],
    });
    expect(set.status).toBe(200);
    expect(set.body.data[0]).toMatchObject({ slug: "gpt-4o-mini", custom_headers: { "x-team-route": "search" } });
    await chat({ "x-gateway-provider": "@openai-prod" });
    expect(upstream.lastRequest()!.headers["x-team-route"]).toBe("search");

    expect((await api("PUT", "/v1/integrations/openai-prod/models", { allow_all_models: false })).status).toBe(200);
    const refused = await chat({ "x-gateway-provider": "@openai-prod" }, "gpt-4o").catch((error: unknown) => error);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(403);
    const models = await api("GET", "/v1/integrations/openai-prod/models");
    expect(models.body).toMatchObject({ allow_all_models: false, total: 1 });
    expect((await api("PUT", "/v1/integrations/openai-prod/models", { allow_all_models: true })).status).toBe(200);
    const badHeader = await api("PUT", "/v1/integrations/openai-prod/integration-models", {
      models: [{ slug: "m", custom_headers: { "bad header": "x" } }],
    });
    expect(badHeader.status).toBe(400);
  });

  it("serves workspace keys only when the integration is enabled for their workspace", async () => {
    const records = gateway.gateway.services.stores.records;
    const workspace = await workspaceStore(records).create(orgId(), { slug: "team-b", name: "Team B", defaults: {} });
    const { secret } = await createApiKey(records, {
      organisationId: orgId(),
      workspaceId: workspace.id,
      name: "team b",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["integrations.read", "integrations.list", "integrations.update", "configs.read"],
    });
    const denied = await chat({ "x-gateway-provider": "@openai-prod" }, "gpt-4o-mini", secret).catch(
      (error: unknown) => error,
    );
    // Not enabled for this workspace answers as an unknown slug would: 404.
    expect((denied as InstanceType<typeof OpenAI.APIError>).status).toBe(404);
    expect((await api("GET", "/v1/integrations/openai-prod", undefined, secret)).status).toBe(404);
    expect(
      (await api("PUT", "/v1/integrations/openai-prod/workspaces", { workspace_ids: [workspace.id] }, secret)).status,
    ).toBe(403);

    const enabled = await api("PUT", "/v1/integrations/openai-prod/workspaces", {
      workspaces: [{ id: workspace.id, enabled: true }],
    });
    expect(enabled.status).toBe(200);
    expect(enabled.body.workspaces).toEqual([expect.objectContaining({ id: workspace.id, enabled: true })]);
    const { data } = await chat({ "x-gateway-provider": "@openai-prod" }, "gpt-4o-mini", secret);
    expect(data.choices[0]!.message.content).toBeTruthy();
    const visible = await api("GET", "/v1/integrations", undefined, secret);
    expect(visible.body.data.map((item: any) => item.slug)).toContain("openai-prod");
    expect((await api("PUT", "/v1/integrations/openai-prod", { name: "renamed" }, secret)).status).toBe(403);
  });
});

describe("workspace default config", () => {
  it("routes a request that names no provider through the workspace's defaults.config_id", async () => {
    const records = gateway.gateway.services.stores.records;
    const workspace = await workspaceStore(records).create(orgId(), {
      slug: "team-c",
      name: "Team C",
      defaults: { config_id: "fallback-cfg" },
    });
    const { secret } = await createApiKey(records, {
      organisationId: orgId(),
      workspaceId: workspace.id,
      name: "team c",
      keyType: "workspace",
      keySubType: "service",
      scopes: [],
    });
    const { response } = await chat({}, "gpt-4o-mini", secret);
    expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
  });
});

describe("virtual keys", () => {
  it("works through x-gateway-virtual-key and a config's virtual_key", async () => {
    const created = await api("POST", "/v1/virtual-keys", {
      name: "Legacy OpenAI",
      provider: "openai",
      key: VIRTUAL_KEY,
      custom_host: `${upstream.url}/v1`,
    });
    expect(created.status).toBe(201);
    expect(created.body.id).toMatch(/^vk_/);
    const slug = created.body.slug;
    expect(slug).toMatch(/^legacy-openai-/);

    await chat({ "x-gateway-virtual-key": slug });
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${VIRTUAL_KEY}`);
    await client({
      "x-gateway-config": JSON.stringify({ strategy: { mode: "fallback" }, targets: [{ virtual_key: slug }] }),
    }).chat.completions.create({
      model: "gpt-4o-mini",
      messages,
    });
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${VIRTUAL_KEY}`);

    const updated = await api("PUT", `/v1/virtual-keys/${slug}`, { name: "Renamed" });
    expect(updated.body).toMatchObject({ name: "Renamed", masked_api_key: expect.stringMatching(/^sk\*+/) });
    const list = await api("GET", "/v1/virtual-keys");
    expect(list.body.data.some((item: any) => item.slug === slug)).toBe(true);
    expect((await api("DELETE", `/v1/virtual-keys/${slug}`)).status).toBe(200);
    expect((await api("GET", `/v1/virtual-keys/${slug}`)).status).toBe(404);
  });
});

describe("secrets", () => {
  it("never shows or stores a provider key in clear (responses, audit, logs, database files)", async () => {
    const views = [
      await api("GET", "/v1/integrations"),
      await api("GET", "/v1/integrations/openai-prod"),
      await api("GET", "/v1/integrations/openai-prod/models"),
      await api("GET", "/v1/virtual-keys"),
      await api("GET", "/v1/logs?limit=100"),
    ];
    for (const view of views) {
      expect(JSON.stringify(view.body)).not.toContain(INTEGRATION_KEY);
      expect(JSON.stringify(view.body)).not.toContain(VIRTUAL_KEY);
    }
    const audit = await gateway.gateway.services.stores.records.query({
      partition: `ORG#${orgId()}#AUDIT`,
      index: "gsi1",
      limit: 1000,
    });
    expect(audit.items.some((item) => item.resourceType === "integration")).toBe(true);
    expect(JSON.stringify(audit.items)).not.toContain(INTEGRATION_KEY);
    expect(JSON.stringify(audit.items)).not.toContain(VIRTUAL_KEY);

    await new Promise((resolve) => setTimeout(resolve, 200));
    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((file) => !file.endsWith("/"));
    for (const file of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, file));
      } catch {
        continue; // a directory
      }
      expect(bytes.includes(INTEGRATION_KEY), file).toBe(false);
      expect(bytes.includes(VIRTUAL_KEY), file).toBe(false);
    }
  });
});
