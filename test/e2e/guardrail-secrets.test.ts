import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { guardrailStore } from "../../core/control/guardrails/store.ts";
import { configStore } from "../../core/control/saved-resources.ts";
import { apiCaller, type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Secret check parameters (a webhook's token) of saved guardrails and of the guardrails written inline in a
 * saved config are sealed at rest: the stored records (read straight from the Records store) and the disk hold
 * no token, every view shows its hint, and the webhook still receives the token when the guardrail runs.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let webhook: MockServer;
const api = apiCaller(() => gateway);

const GUARDRAIL_TOKEN = "Bearer whk-guardrail-3f9a1c7e5b2d";
const CONFIG_TOKEN = "whk-config-8e2b6d0a4c1f";
const HOOK_TOKEN = "whk-hook-1a5c9e3b7d0f";
const TOKENS = [GUARDRAIL_TOKEN, CONFIG_TOKEN, HOOK_TOKEN];

beforeAll(async () => {
  [gateway, upstream, webhook] = await Promise.all([
    startTestGateway(),
    startOpenAIMock(),
    startMockServer((_request, res) => sendJson(res, 200, { verdict: true })),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), webhook?.close()]);
});

const records = () => gateway.gateway.services.stores.records;
const organisationId = () => gateway.gateway.bootstrap.organisationId;

const expectNoToken = (value: unknown, where: string) => {
  const text = JSON.stringify(value);
  for (const token of TOKENS) expect(text.includes(token), `${where}: ${token}`).toBe(false);
};

/** A chat request through `config` (inline JSON or a saved config's slug); answers the status. */
async function chatWith(config: string): Promise<number> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json", "x-gateway-config": config },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hello" }] }),
  });
  await response.text();
  return response.status;
}

/** The headers of the webhook calls made while running `work`. */
async function webhookHeaders(work: () => Promise<unknown>) {
  webhook.requests.length = 0;
  await work();
  return webhook.requests.map((request) => request.headers);
}

const provider = () => ({ provider: "openai", api_key: "sk-upstream", custom_host: `${upstream.url}/v1` });

describe("saved guardrails' secret parameters", () => {
  it("are stored sealed, shown as hints, and sent to the webhook when the guardrail runs", async () => {
    const created = await api("POST", "/v1/guardrails", {
      name: "Webhook judge",
      slug: "webhook-judge",
      checks: [
        {
          id: "default.webhook",
          parameters: { webhookURL: `${webhook.url}/judge`, headers: { Authorization: GUARDRAIL_TOKEN } },
        },
      ],
      actions: { deny: true },
    });
    expect(created.status).toBe(201);
    expectNoToken(created.body, "create");
    expect(created.body.checks[0].parameters.headers).toEqual({ Authorization: "Be********5b2d" });

    const stored = await guardrailStore(records()).get(organisationId(), "webhook-judge");
    expectNoToken(stored, "stored guardrail");
    expect(stored!.checks[0]!.parameters.headers).toEqual({
      Authorization: { $sealed: expect.any(String), hint: "Be********5b2d" },
    });

    const config = JSON.stringify({ ...provider(), input_guardrails: ["webhook-judge"] });
    const viaChat = await webhookHeaders(async () => expect(await chatWith(config)).toBe(200));
    expect(viaChat.map((headers) => headers.authorization)).toEqual([GUARDRAIL_TOKEN]);
    const viaInvoke = await webhookHeaders(async () => {
      const invoked = await api("POST", `/v1/guardrails/${created.body.id}/invoke`, { input: "hello" });
      expect(invoked.body).toMatchObject({ verdict: true });
      expectNoToken(invoked.body, "invoke");
    });
    expect(viaInvoke.map((headers) => headers.authorization)).toEqual([GUARDRAIL_TOKEN]);

    // Sent back as GET shows it (with a new name): the token is kept, sealed.
    const shown = await api("GET", "/v1/guardrails/webhook-judge");
    expectNoToken(shown.body, "get");
    const updated = await api("PUT", "/v1/guardrails/webhook-judge", {
      name: "Webhook judge 2",
      checks: shown.body.checks,
    });
    expect(updated.status).toBe(200);
    expectNoToken(await guardrailStore(records()).get(organisationId(), "webhook-judge"), "updated guardrail");
    const afterUpdate = await webhookHeaders(async () => expect(await chatWith(config)).toBe(200));
    expect(afterUpdate.map((headers) => headers.authorization)).toEqual([GUARDRAIL_TOKEN]);

    const versions = await records().query({ partition: `GUARDRAIL#${created.body.id}`, prefix: "VERSION#" });
    expect(versions.items).toHaveLength(2);
    expectNoToken(versions.items, "stored versions");
    expectNoToken((await api("GET", "/v1/guardrails/webhook-judge/versions")).body, "versions");
    expectNoToken((await api("GET", "/v1/guardrails/webhook-judge?version=1")).body, "version 1");
    expectNoToken((await api("GET", "/v1/guardrails")).body, "list");
  });
});

describe("guardrails written inline in a saved config", () => {
  const inlineConfig = (configToken: string, hookToken: string) => ({
    ...provider(),
    input_guardrails: [
      {
        "default.webhook": { webhookURL: `${webhook.url}/inline`, headers: { "X-Hook-Token": configToken } },
        deny: true,
      },
    ],
    before_request_hooks: [
      {
        type: "guardrail",
        checks: [
          {
            id: "default.webhook",
            parameters: { webhookURL: `${webhook.url}/hook`, headers: JSON.stringify({ "X-Hook-Token": hookToken }) },
          },
        ],
      },
    ],
  });

  const tokensSent = async (config: string) =>
    (await webhookHeaders(async () => expect(await chatWith(config)).toBe(200)))
      .map((headers) => headers["x-hook-token"])
      .sort();

  it("have their secret parameters sealed with the config's credentials, shown as hints, opened to route", async () => {
    const created = await api("POST", "/v1/configs", {
      name: "inline hooks",
      slug: "inline-hooks",
      config: inlineConfig(CONFIG_TOKEN, HOOK_TOKEN),
    });
    expect(created.status).toBe(201);
    expectNoToken(created.body, "create");
    expect(created.body.config.input_guardrails[0]["default.webhook"].headers).toEqual({
      "X-Hook-Token": "wh********4c1f",
    });
    const stored = await configStore(records()).get(organisationId(), "inline-hooks");
    expectNoToken(stored, "stored config");
    expect(stored!.config.api_key).toMatchObject({ $sealed: expect.any(String) });

    expect(await tokensSent("inline-hooks")).toEqual([CONFIG_TOKEN, HOOK_TOKEN].sort());

    // Sent back as GET shows it: both tokens are kept.
    const shown = await api("GET", "/v1/configs/inline-hooks");
    expectNoToken(shown.body, "get");
    expect((await api("PUT", "/v1/configs/inline-hooks", { config: shown.body.config })).status).toBe(200);
    expectNoToken(await configStore(records()).get(organisationId(), "inline-hooks"), "updated config");
    expect(await tokensSent("inline-hooks")).toEqual([CONFIG_TOKEN, HOOK_TOKEN].sort());

    // A masked token moved to another place has nothing behind it: 400 naming the place.
    const moved = structuredClone(shown.body.config);
    moved.input_guardrails[0]["default.webhook"].headers = { "X-Other": "wh********4c1f" };
    const refused = await api("PUT", "/v1/configs/inline-hooks", { config: moved });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: "masked_secret",
      param: "config.input_guardrails[0].default.webhook.headers.X-Other",
    });

    expectNoToken((await api("GET", "/v1/configs/inline-hooks/versions")).body, "versions");
    expectNoToken((await api("GET", "/v1/configs")).body, "list");
    const versions = await records().query({ partition: `CONFIG#${created.body.id}`, prefix: "VERSION#" });
    expectNoToken(versions.items, "stored versions");
  });

  it("never reach the audit log or the disk in clear", async () => {
    expectNoToken((await api("GET", "/v1/audit-logs")).body, "audit");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    for (const file of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, file));
      } catch {
        continue; // a directory
      }
      for (const token of TOKENS) expect(bytes.includes(token), `${file}: ${token}`).toBe(false);
    }
  });
});
