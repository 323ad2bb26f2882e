import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { configStore, writeConfigVersion } from "../../core/control/saved-resources.ts";
import { apiCaller, type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Provider credentials inside saved configs are sealed through the Secrets port: never on disk in clear, shown
 * masked by GET, the list, versions and the audit log, opened only to route. Configs saved in clear before
 * (legacy) still route and are shown masked.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
const api = apiCaller(() => gateway);

const KEY = "sk-config-secret-5b1e9d7c3a";
const NEW_KEY = "sk-config-rotated-8c2f4a6e0d";
const AWS_SECRET = "aws-secret-access-key-value-6f0d";
const AWS_TOKEN = "aws-session-token-value-2e7b";
const SA_PRIVATE_KEY = "-----BEGIN PRIVATE KEY-----sa-private-key-9a3c";
const LEGACY_KEY = "sk-legacy-plaintext-4e8a1c";
const SECRETS = [KEY, NEW_KEY, AWS_SECRET, AWS_TOKEN, SA_PRIVATE_KEY, LEGACY_KEY];

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const configBody = (apiKey: string) => ({
  strategy: { mode: "fallback" },
  targets: [
    { provider: "openai", api_key: apiKey, custom_host: `${upstream.url}/v1` },
    {
      provider: "bedrock",
      aws_access_key_id: "AKIAEXAMPLEKEY01",
      aws_secret_access_key: AWS_SECRET,
      aws_session_token: AWS_TOKEN,
      aws_region: "us-east-1",
    },
    {
      provider: "vertex-ai",
      vertexServiceAccountJson: { client_email: "a@b.iam", private_key: SA_PRIVATE_KEY },
      vertex_region: "us-central1",
    },
  ],
});

async function chatWith(config: string): Promise<number> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json", "x-gateway-config": config },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
  });
  await response.text();
  return response.status;
}

const expectNoSecret = (value: unknown, where: string) => {
  const text = JSON.stringify(value);
  for (const secret of SECRETS) expect(text.includes(secret), `${where}: ${secret}`).toBe(false);
};

describe("credentials in saved configs", () => {
  it("are sealed when saved, masked in every view, and opened to route", async () => {
    const created = await api("POST", "/v1/configs", { name: "with keys", slug: "with-keys", config: configBody(KEY) });
    expect(created.status).toBe(201);
    expectNoSecret(created.body, "create");
    const first = created.body.config.targets[0];
    expect(first.api_key).toBe(`sk********${KEY.slice(-4)}`);
    expect(created.body.config.targets[1].aws_secret_access_key).toMatch(/\*{8}/);
    expect(created.body.config.targets[1].aws_region).toBe("us-east-1");

    expect(await chatWith("with-keys")).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${KEY}`);

    // Sent back as GET showed it: the stored key is kept.
    const shown = (await api("GET", `/v1/configs/${created.body.id}`)).body;
    const kept = await api("PUT", `/v1/configs/${created.body.id}`, { config: shown.config });
    expect(kept.status).toBe(200);
    expect(await chatWith("with-keys")).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${KEY}`);

    // A new key replaces it.
    const rotated = await api("PUT", `/v1/configs/${created.body.id}`, { config: configBody(NEW_KEY) });
    expect(rotated.status).toBe(200);
    expectNoSecret(rotated.body, "update");
    expect(await chatWith("with-keys")).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${NEW_KEY}`);

    expectNoSecret((await api("GET", `/v1/configs/${created.body.id}`)).body, "get");
    expectNoSecret((await api("GET", `/v1/configs/${created.body.id}?version=1`)).body, "get version");
    expectNoSecret((await api("GET", "/v1/configs")).body, "list");
    expectNoSecret((await api("GET", `/v1/configs/${created.body.id}/versions`)).body, "versions");
  });

  it("saved in clear before (legacy) still route, and are shown masked", async () => {
    const records = gateway.gateway.services.stores.records;
    const legacy = await configStore(records).create(gateway.gateway.bootstrap.organisationId, {
      name: "legacy",
      slug: "legacy",
      config: { provider: "openai", api_key: LEGACY_KEY, custom_host: `${upstream.url}/v1` },
      isDefault: false,
      status: "active",
    });
    await writeConfigVersion(records, legacy);
    const shown = await api("GET", "/v1/configs/legacy");
    expect(shown.body.config.api_key).toBe(`sk********${LEGACY_KEY.slice(-4)}`);
    expectNoSecret((await api("GET", `/v1/configs/${legacy.id}/versions`)).body, "legacy versions");
    expect(await chatWith("legacy")).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${LEGACY_KEY}`);
    // Its next update seals it (the masked key sent back keeps the stored one).
    expect((await api("PUT", "/v1/configs/legacy", { config: shown.body.config })).status).toBe(200);
    expect(await chatWith("legacy")).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${LEGACY_KEY}`);
    const stored = await configStore(records).get(gateway.gateway.bootstrap.organisationId, "legacy");
    expect(JSON.stringify(stored!.config)).not.toContain(LEGACY_KEY);
  });

  it("never reach the audit log or the disk in clear (but the legacy record written in clear above)", async () => {
    const audit = await api("GET", "/v1/audit-logs");
    expect(audit.status).toBe(200);
    expect(audit.body.data.length).toBeGreaterThan(0);
    expectNoSecret(audit.body, "audit");
    await new Promise((resolve) => setTimeout(resolve, 200));
    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    for (const file of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, file));
      } catch {
        continue; // a directory
      }
      for (const secret of [KEY, NEW_KEY, AWS_SECRET, AWS_TOKEN, SA_PRIVATE_KEY]) {
        expect(bytes.includes(secret), `${file}: ${secret}`).toBe(false);
      }
    }
  });
});
