import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import { integrationStore } from "../../core/control/integrations.ts";
import { sealCredentials } from "../../core/control/provider-credentials.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";
import { type AwsSecretsMock, startAwsSecretsMock } from "../mocks/aws-secrets.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Secret references in saved provider credentials, end to end: an integration whose key is `env:...` or
 * `file:...` calls the upstream with the secret's value, and nothing the gateway answers, logs or stores shows
 * that value; broken references fail the request clearly without it. References stay inside the operator's
 * namespace (GATEWAY_SECRET_REF_ENV_PREFIX, GATEWAY_SECRET_FILES_DIR), need the `secret_references.create`
 * scope and resolve only for the organisation that saved them (issue 38). The AWS platform's resolver reads
 * Secrets Manager and SSM (a mock speaking their JSON protocol) through the AWS stores.
 */

const ENV_SECRET = "sk-env-secret-value-8c1d4f7a2b9e";
const FILE_SECRET = "sk-file-secret-value-3e6a0d9c5f1b";
/** A variable of the gateway's environment outside the prefix, standing for HOME, PATH or a database URL. */
const OUTSIDE_SECRET = "postgres://operator:hunter2-outside-the-prefix@db/gateway";
let gateway: TestGateway;
let upstream: OpenAIMock;
let filesDir: string;
let workspaceKey: string;
let otherOrgKey: string;
const api = apiCaller(() => gateway);

beforeAll(async () => {
  upstream = await startOpenAIMock();
  filesDir = mkdtempSync(join(tmpdir(), "gateway-secret-files-"));
  writeFileSync(join(filesDir, "openai.key"), `${FILE_SECRET}\n`);
  gateway = await startTestGateway({
    GW_REF_OPENAI_PROD_KEY: ENV_SECRET,
    HOME: OUTSIDE_SECRET,
    GATEWAY_SECRET_REF_ENV_PREFIX: "GW_REF_",
    GATEWAY_SECRET_FILES_DIR: filesDir,
    GATEWAY_SECRET_REF_CACHE_SECONDS: "60",
  });
  const records = gateway.gateway.services.stores.records;
  const { organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap;
  const key = (organisationId: string, name: string, scopes: string[], workspaceId?: string) =>
    createApiKey(records, {
      organisationId,
      workspaceId,
      name,
      keyType: workspaceId ? "workspace" : "organisation",
      keySubType: "service",
      scopes,
    }).then((created) => created.secret);
  workspaceKey = await key(
    organisationId,
    "workspace",
    ["integrations.create", "completions.write"],
    defaultWorkspaceId,
  );
  otherOrgKey = await key("org_other", "other admin", ["*"]);
});

/** Saves an integration calling the mock upstream with `key`, as `caller` (the admin key by default). */
const saveIntegration = (slug: string, key: string, caller = gateway.adminKey) =>
  api(
    "POST",
    "/v1/integrations",
    { name: slug, slug, ai_provider_id: "openai", key, configurations: { custom_host: `${upstream.url}/v1` } },
    caller,
  );

/** A chat request with `headers` besides the gateway key, answered as status and text. */
async function rawChat(caller: string, headers: Record<string, string>): Promise<{ status: number; text: string }> {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "x-gateway-api-key": caller, "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }),
  });
  return { status: response.status, text: await response.text() };
}

/** Every credential the mock upstream was sent, whatever the request. */
const credentialsSeen = () =>
  upstream.requests.map((request) => `${request.headers.authorization ?? ""} ${request.headers["api-key"] ?? ""}`);

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
      key: "env:GW_REF_OPENAI_PROD_KEY",
      configurations: { custom_host: `${upstream.url}/v1` },
    } as never)) as any;
    expect(created.id).toMatch(/^int_/);
    const shown = await api("GET", "/v1/integrations/openai-env");
    expect(shown.body.masked_api_key).toBe("env:GW_REF_OPENAI_PROD_KEY");

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

  it("refuses references outside the operator's namespace when saved, even from an admin", async () => {
    for (const [slug, key, param] of [
      ["outside-prefix", "env:HOME", "key"],
      ["own-setting", "env:GATEWAY_DATA_DIR", "key"],
      ["aws-only", "secretsmanager:gateway/openai", "key"],
      ["outside-folder", `file:${join(tmpdir(), "elsewhere.key")}`, "key"],
    ] as const) {
      const saved = await saveIntegration(slug, key);
      expect(saved.status, slug).toBe(400);
      expect(saved.body.error).toMatchObject({ param, code: "invalid_secret_reference" });
      expect(JSON.stringify(saved.body)).not.toContain(OUTSIDE_SECRET);
    }
    expect(credentialsSeen().join("\n")).not.toContain(OUTSIDE_SECRET);
  });

  it("lets no workspace key without the dedicated scope save a reference, and env:HOME reaches no upstream", async () => {
    upstream.reset();
    for (const key of ["env:HOME", "env:GW_REF_OPENAI_PROD_KEY", "file:openai.key"]) {
      const saved = await saveIntegration("mine", key, workspaceKey);
      expect(saved.status, key).toBe(403);
      expect(saved.body.error).toMatchObject({ param: "key", code: "missing_scope" });
    }
    // A plain key is still the workspace's to save; turning it into a reference later is refused alike.
    const plain = await saveIntegration("mine", "sk-plain-workspace-key", workspaceKey);
    expect(plain.status).toBe(201);
    const changed = await api("PUT", "/v1/integrations/mine", { key: "env:HOME" }, workspaceKey);
    expect(changed.status).toBe(403);
    expect((await rawChat(workspaceKey, { "x-gateway-provider": "@mine" })).status).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe("Bearer sk-plain-workspace-key");
    expect(credentialsSeen().join("\n")).not.toContain(OUTSIDE_SECRET);
    // Editing the rest of an integration holding a reference needs no scope: sent back as read, it is not
    // saved anew.
    const { organisationId } = gateway.gateway.bootstrap;
    const editor = (
      await createApiKey(gateway.gateway.services.stores.records, {
        organisationId,
        name: "editor",
        keyType: "organisation",
        keySubType: "service",
        scopes: ["integrations.read", "integrations.update"],
      })
    ).secret;
    const renamed = await api(
      "PUT",
      "/v1/integrations/openai-env",
      { name: "OpenAI via env (renamed)", key: "env:GW_REF_OPENAI_PROD_KEY" },
      editor,
    );
    expect(renamed.status).toBe(200);
    expect(renamed.body.masked_api_key).toBe("env:GW_REF_OPENAI_PROD_KEY");
    expect((await api("PUT", "/v1/integrations/openai-env", { key: "file:openai.key" }, editor)).status).toBe(403);
  });

  it("never resolves a reference written in a config: the text is the credential", async () => {
    upstream.reset();
    const config = { provider: "openai", api_key: "env:HOME", custom_host: `${upstream.url}/v1` };
    expect((await rawChat(workspaceKey, { "x-gateway-config": JSON.stringify(config) })).status).toBe(200);
    expect(upstream.lastRequest()!.headers.authorization).toBe("Bearer env:HOME");
    expect(credentialsSeen().join("\n")).not.toContain(OUTSIDE_SECRET);
  });

  it("resolves a reference only for the organisation that saved it", async () => {
    upstream.reset();
    const claimed = await saveIntegration("borrowed", "env:GW_REF_OPENAI_PROD_KEY", otherOrgKey);
    expect(claimed.status).toBe(403);
    expect(claimed.body.error.code).toBe("secret_reference_forbidden");
    // Written past the save checks (a store restored from elsewhere, or saved before owners were recorded): the
    // reference still resolves for nobody but its owner.
    const records = gateway.gateway.services.stores.records;
    await integrationStore(records).create("org_other", {
      slug: "smuggled",
      name: "smuggled",
      credentials: await sealCredentials(
        gateway.gateway.services.stores.secrets,
        "openai",
        { customHost: `${upstream.url}/v1` },
        { apiKey: "env:GW_REF_OPENAI_PROD_KEY" },
      ),
      workspaceAccess: { global: false, workspaceIds: [] },
      models: { allowAll: true, entries: {} },
    });
    const { status, text } = await rawChat(otherOrgKey, { "x-gateway-provider": "@smuggled" });
    expect(status).toBe(502);
    expect(JSON.parse(text).error.code).toBe("secret_reference_unresolved");
    expect(text).not.toContain(ENV_SECRET);
    expect(upstream.requests).toHaveLength(0);
    // The owner still resolves it.
    await chatWith("openai-env");
    expect(upstream.lastRequest()!.headers.authorization).toBe(`Bearer ${ENV_SECRET}`);
  });

  it("fails a request whose reference cannot be resolved with 502, naming the field but no value", async () => {
    for (const [slug, key] of [
      ["missing-env", "env:GW_REF_NOT_SET_ANYWHERE"],
      ["missing-file", "file:none.key"],
    ] as const) {
      expect((await saveIntegration(slug, key)).status, slug).toBe(201);
      const { status, text } = await rawChat(gateway.adminKey, { "x-gateway-provider": `@${slug}` });
      expect(status, slug).toBe(502);
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
