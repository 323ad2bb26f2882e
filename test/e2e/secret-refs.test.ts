import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";
import { type AwsSecretsMock, startAwsSecretsMock } from "../mocks/aws-secrets.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Secret references in saved provider credentials, end to end: an integration whose key is `env:...` or
 * `file:...` calls the upstream with the secret's value, and nothing the gateway answers, logs or stores shows
 * that value; broken references fail the request clearly without it. The AWS platform's resolver reads
 * Secrets Manager and SSM (a mock speaking their JSON protocol) through the AWS stores.
 */

const ENV_SECRET = "sk-env-secret-value-8c1d4f7a2b9e";
const FILE_SECRET = "sk-file-secret-value-3e6a0d9c5f1b";
let gateway: TestGateway;
let upstream: OpenAIMock;
let filesDir: string;
const api = apiCaller(() => gateway);

beforeAll(async () => {
  upstream = await startOpenAIMock();
  filesDir = mkdtempSync(join(tmpdir(), "gateway-secret-files-"));
  writeFileSync(join(filesDir, "openai.key"), `${FILE_SECRET}\n`);
  gateway = await startTestGateway({
    OPENAI_PROD_KEY: ENV_SECRET,
    GATEWAY_SECRET_FILES_DIR: filesDir,
    GATEWAY_SECRET_REF_CACHE_SECONDS: "60",
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(filesDir, { recursive: true, force: true });
});

const client = () =>
  new OpenAI({
    apiKey: "sk-client-key-not-used",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey },
  });

const chatWith = (slug: string) =>
  client().chat.completions.create(
    { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] },
    { headers: { "x-gateway-provider": `@${slug}` } },
  );

describe("secret references on the local platform", () => {
  it("calls the upstream with an env: secret and shows only the reference", async () => {
    const portkey = new Portkey({ apiKey: gateway.adminKey, baseURL: `${gateway.url}/v1` });
    const created = (await portkey.integrations.create({
      name: "OpenAI via env",
      slug: "openai-env",
      ai_provider_id: "openai",
      key: "env:OPENAI_PROD_KEY",
      configurations: { custom_host: `${upstream.url}/v1` },
    } as never)) as any;
    expect(created.id).toMatch(/^int_/);
    const shown = await api("GET", "/v1/integrations/openai-env");
    expect(shown.body.masked_api_key).toBe("env:OPENAI_PROD_KEY");

    const answer = await chatWith("openai-env");
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${ENV_SECRET}`);

    // The request's log record: written with usage and cost, without the secret.
    let logs: any;
    await expect
      .poll(
        async () => {
          logs = await api("GET", "/v1/logs?limit=100&provider=openai");
          return logs.body.data?.length ?? 0;
        },
        { timeout: 5000 },
      )
      .toBeGreaterThan(0);
    expect(logs.body.data[0]).toMatchObject({ status: 200, requestedModel: "gpt-4o-mini" });
    expect(logs.body.data[0].usage.totalTokens).toBeGreaterThan(0);
    expect(logs.body.data[0].cost).toBeGreaterThan(0);
    expect(JSON.stringify(logs.body)).not.toContain(ENV_SECRET);
  });

  it("reads file: secrets under GATEWAY_SECRET_FILES_DIR and refuses traversal when saved", async () => {
    const created = await api("POST", "/v1/integrations", {
      name: "OpenAI via file",
      slug: "openai-file",
      ai_provider_id: "openai",
      key: "file:openai.key",
      configurations: { custom_host: `${upstream.url}/v1` },
    });
    expect(created.status).toBe(201);
    await chatWith("openai-file");
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${FILE_SECRET}`);

    const traversal = await api("POST", "/v1/integrations", {
      name: "Escape",
      slug: "escape",
      ai_provider_id: "openai",
      key: "file:../../etc/passwd",
    });
    expect(traversal.status).toBe(400);
    expect(traversal.body.error).toMatchObject({ param: "key", code: "invalid_secret_reference" });
    const badAws = await api("POST", "/v1/integrations", {
      name: "Bad AWS",
      slug: "bad-aws",
      ai_provider_id: "bedrock",
      configurations: {
        aws_access_key_id: "AKIDEXAMPLE",
        aws_secret_access_key: "env:NOT A NAME",
        aws_region: "us-east-1",
      },
    });
    expect(badAws.status).toBe(400);
    expect(badAws.body.error.param).toBe("configurations.aws_secret_access_key");
  });

  it("fails a request whose reference cannot be resolved with 502, naming the field but no value", async () => {
    for (const [slug, key] of [
      ["missing-env", "env:NOT_SET_ANYWHERE"],
      ["own-setting", "env:GATEWAY_DATA_DIR"],
      ["aws-only", "secretsmanager:gateway/openai"],
    ] as const) {
      await api("POST", "/v1/integrations", {
        name: slug,
        slug,
        ai_provider_id: "openai",
        key,
        configurations: { custom_host: `${upstream.url}/v1` },
      });
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-provider": `@${slug}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }),
      });
      const text = await response.text();
      expect(response.status, slug).toBe(502);
      expect(JSON.parse(text).error.code).toBe("secret_reference_unresolved");
      expect(text).toContain("'key'");
      expect(text).not.toContain(gateway.gateway.services.settings.GATEWAY_DATA_DIR);
    }
  });

  it("never writes a resolved secret to the data directory", async () => {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const dir = gateway.gateway.services.settings.GATEWAY_DATA_DIR;
    for (const file of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(join(dir, file));
      } catch {
        continue; // a directory
      }
      expect(bytes.includes(ENV_SECRET), file).toBe(false);
      expect(bytes.includes(FILE_SECRET), file).toBe(false);
    }
  });
});

describe("secret references on the AWS platform", () => {
  let mock: AwsSecretsMock;
  beforeAll(async () => {
    mock = await startAwsSecretsMock();
    mock.secrets.set("gateway/openai", JSON.stringify({ api_key: "sk-sm-secret" }));
    mock.parameters.set("/gateway/openai", "sk-ssm-secret");
  });
  afterAll(async () => {
    await mock?.close();
  });

  it("resolves through the AWS stores' resolver, prefix-scoped and cached", async () => {
    const stores = createAwsStores({
      tableName: "unused",
      bucketName: "unused",
      queueUrls: {},
      masterKey: Buffer.alloc(32, 1),
      endpoints: { secretsmanager: mock.url, ssm: mock.url },
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
      region: "us-east-1",
      maxAttempts: 1,
      secretRefs: { prefix: "gateway/", cacheMs: 60_000 },
    });
    try {
      const refs = stores.secretRefs!;
      expect(await refs.resolve({ scheme: "secretsmanager", id: "gateway/openai", jsonKey: "api_key" })).toBe(
        "sk-sm-secret",
      );
      expect(await refs.resolve({ scheme: "ssm", name: "/gateway/openai" })).toBe("sk-ssm-secret");
      const calls = mock.calls();
      expect(await refs.resolve({ scheme: "ssm", name: "/gateway/openai" })).toBe("sk-ssm-secret");
      expect(mock.calls()).toBe(calls);
      await expect(refs.resolve({ scheme: "ssm", name: "/elsewhere/x" })).rejects.toMatchObject({ reason: "invalid" });
      await expect(refs.resolve({ scheme: "env", name: "X" })).rejects.toMatchObject({ reason: "unsupported" });
    } finally {
      await stores.close();
    }
  });
});
