import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * An API key's `defaults.config_id` routes its requests that name no config and no provider. The key's default
 * is more specific than its workspace's `defaults.config_id`, so it wins; headers still win over both.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let admin: string;
let workspace: { id: string };
let otherWorkspace: { id: string };
const configs: Record<string, { id: string; slug: string }> = {};

const chatBody = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] };

/** A saved config whose one target rewrites the model, so the upstream request tells which config routed. */
async function saveConfig(name: string, model: string, workspaceId: string) {
  const answer = await call(gateway, admin, "POST", "/v1/configs", {
    name,
    slug: name,
    workspace_id: workspaceId,
    config: { strategy: { mode: "fallback" }, targets: [{ virtual_key: "defaults-vk", override_params: { model } }] },
  });
  expect(answer.status, answer.text).toBe(201);
  configs[name] = { id: answer.body.id, slug: answer.body.slug };
}

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  workspace = await seedWorkspace(gateway, "Defaults");
  otherWorkspace = await seedWorkspace(gateway, "Defaults other");
  const virtualKey = await call(gateway, admin, "POST", "/v1/virtual-keys", {
    name: "defaults",
    slug: "defaults-vk",
    provider: "openai",
    key: "sk-defaults-upstream",
    custom_host: `${upstream.url}/v1`,
    workspace_id: workspace.id,
  });
  expect(virtualKey.status, virtualKey.text).toBe(201);
  await saveConfig("workspace-default", "model-of-workspace-default", workspace.id);
  await saveConfig("key-default", "model-of-key-default", workspace.id);
  await saveConfig("elsewhere", "model-elsewhere", otherWorkspace.id);
  const updated = await call(gateway, admin, "PUT", `/v1/admin/workspaces/${workspace.id}`, {
    defaults: { config_id: configs["workspace-default"]!.id },
  });
  expect(updated.status, JSON.stringify(updated.body)).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const upstreamModel = () => upstream.lastRequest()!.json().model;

describe("API key defaults", () => {
  it("routes through the key's default config, before the workspace's; headers still choose first", async () => {
    const plain = await createKey(gateway, admin, "workspace", "service", {
      name: "no default",
      workspace_id: workspace.id,
      scopes: [],
    });
    expect((await call(gateway, plain.key, "POST", "/v1/chat/completions", chatBody)).status).toBe(200);
    expect(upstreamModel()).toBe("model-of-workspace-default");

    // By slug on write; stored and shown as the config's id.
    const withDefault = await createKey(gateway, admin, "workspace", "service", {
      name: "with default",
      workspace_id: workspace.id,
      scopes: [],
      defaults: { config_id: configs["key-default"]!.slug, metadata: { team: "a" } },
    });
    expect(withDefault.body.defaults).toEqual({ config_id: configs["key-default"]!.id, metadata: { team: "a" } });
    const answer = await call(gateway, withDefault.key, "POST", "/v1/chat/completions", chatBody);
    expect(answer.status, answer.text).toBe(200);
    expect(upstreamModel()).toBe("model-of-key-default");

    const named = await call(gateway, withDefault.key, "POST", "/v1/chat/completions", chatBody, {
      "x-gateway-config": configs["workspace-default"]!.id,
    });
    expect(named.status).toBe(200);
    expect(upstreamModel()).toBe("model-of-workspace-default");
  });

  it("applies a default set by update at once, and clearing it falls back to the workspace's", async () => {
    const key = await createKey(gateway, admin, "workspace", "service", {
      name: "updated default",
      workspace_id: workspace.id,
      scopes: [],
    });
    await call(gateway, key.key, "POST", "/v1/chat/completions", chatBody);
    const set = await call(gateway, admin, "PUT", `/v1/api-keys/${key.id}`, {
      defaults: { config_id: configs["key-default"]!.id },
    });
    expect(set.status).toBe(200);
    await call(gateway, key.key, "POST", "/v1/chat/completions", chatBody);
    expect(upstreamModel()).toBe("model-of-key-default");
    expect((await call(gateway, admin, "PUT", `/v1/api-keys/${key.id}`, { defaults: null })).status).toBe(200);
    await call(gateway, key.key, "POST", "/v1/chat/completions", chatBody);
    expect(upstreamModel()).toBe("model-of-workspace-default");
  });

  it("refuses a default config the key could not use (unknown, or another workspace's), alike", async () => {
    const answers = [];
    for (const ref of ["zz-no-such-config", configs.elsewhere!.id, configs.elsewhere!.slug]) {
      const answer = await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", {
        name: "bad default",
        workspace_id: workspace.id,
        scopes: [],
        defaults: { config_id: ref },
      });
      answers.push({ status: answer.status, code: answer.body.error?.code, param: answer.body.error?.param });
    }
    expect(answers).toEqual(Array(3).fill({ status: 400, code: "config_not_found", param: "defaults.config_id" }));
    const wrongType = await call(gateway, admin, "POST", "/v1/api-keys/workspace/service", {
      name: "bad default",
      workspace_id: workspace.id,
      scopes: [],
      defaults: { config_id: 42 },
    });
    expect(wrongType.status).toBe(400);
  });
});
