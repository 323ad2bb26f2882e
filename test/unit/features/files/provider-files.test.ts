import { createHash, randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ResourceOwner } from "../../../../core/auth/resource-owner.ts";
import { loadSettings } from "../../../../core/config/settings.ts";
import { fileStoreOf } from "../../../../core/features/files/file-store.ts";
import { AZURE_FILES_API_VERSION, ensureProviderFile } from "../../../../core/features/files/provider-files.ts";
import { providerKeyOf } from "../../../../core/providers/account-key.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { createLocalStores } from "../../../../core/platform/local/local-stores.ts";
import type { ProviderTarget } from "../../../../core/providers/types.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import type { Services } from "../../../../core/services.ts";
import type { Stores } from "../../../../core/store/ports.ts";
import { type OpenAIFilesMock, startOpenAIFilesMock } from "../../../mocks/openai-files.ts";

describe("providerKeyOf", () => {
  const base: ProviderTarget = { provider: "openai", apiKey: "sk-account-one-0123456789" };

  it("is stable for one account and names the provider", () => {
    expect(providerKeyOf(base)).toBe(providerKeyOf({ ...base }));
    expect(providerKeyOf(base)).toMatch(/^openai:[\w-]{11}$/);
  });

  it("tells accounts apart: credentials, custom host, Azure resource, AWS account", () => {
    const keys = new Set([
      providerKeyOf(base),
      providerKeyOf({ ...base, apiKey: "sk-account-two-0123456789" }),
      providerKeyOf({ ...base, customHost: "https://proxy.example.com/v1" }),
      providerKeyOf({ provider: "azure-openai", apiKey: base.apiKey, azure: { resourceName: "east" } }),
      providerKeyOf({ provider: "azure-openai", apiKey: base.apiKey, azure: { resourceName: "west" } }),
      providerKeyOf({ provider: "bedrock", aws: { accessKeyId: "AKIA1", region: "us-east-1" } }),
      providerKeyOf({ provider: "bedrock", aws: { accessKeyId: "AKIA1", region: "eu-west-1" } }),
    ]);
    expect(keys.size).toBe(7);
  });

  it("ignores what does not change the account (deployment, model headers)", () => {
    expect(providerKeyOf({ ...base, forwardHeaders: { "x-a": "1" } })).toBe(providerKeyOf(base));
    const azure: ProviderTarget = { provider: "azure-openai", apiKey: "k", azure: { resourceName: "r" } };
    expect(providerKeyOf({ ...azure, azure: { resourceName: "r", deploymentId: "gpt" } })).toBe(providerKeyOf(azure));
  });

  it("never contains the credential", () => {
    const secret = "sk-very-secret-key-material";
    const key = providerKeyOf({ provider: "openai", apiKey: secret });
    expect(key).not.toContain(secret);
    expect(key).not.toContain("very-secret");
  });
});

describe("ensureProviderFile", () => {
  const apiKey = "sk-mock-files-key";
  let dataDir: string;
  let stores: Stores;
  let services: Services;
  let mock: OpenAIFilesMock;
  let owner: ResourceOwner;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "provider-files-"));
    stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
    services = {
      stores,
      settings: loadSettings({}),
      trustedHosts: parseTrustedHosts(["127.0.0.1", "localhost"]),
    } as unknown as Services;
    mock = await startOpenAIFilesMock({ apiKey });
  });
  afterAll(async () => {
    await mock?.close();
    await stores?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  beforeEach(() => {
    owner = { organisationId: `org_${randomUUID().slice(0, 8)}`, workspaceId: "ws_1" };
    mock.server.requests.length = 0;
  });

  const openai = (): ProviderTarget => ({ provider: "openai", apiKey, customHost: `${mock.url}/v1` });
  const uploads = () => mock.server.requests.filter((request) => request.method === "POST");

  it("streams the bytes to the provider's Files API, links the id and reuses the link", async () => {
    const content = randomBytes(3 * 1024 * 1024 + 17);
    const stored = await fileStoreOf(services).create(owner, {
      filename: 'batch "input".jsonl',
      purpose: "batch",
      contentType: "application/jsonl",
      body: new Blob([content]).stream(),
    });
    const signal = new AbortController().signal;
    const id = await ensureProviderFile(services, stored, openai(), signal);

    const received = mock.files.get(id)!;
    expect(received.sha256).toBe(createHash("sha256").update(content).digest("hex"));
    expect(received.purpose).toBe("batch");
    expect(received.filename).toBe("batch %22input%22.jsonl");
    const upload = uploads()[0]!;
    expect(upload.path).toBe("/v1/files");
    expect(upload.headers.authorization).toBe(`Bearer ${apiKey}`);
    expect(Number(upload.headers["content-length"])).toBe(upload.body.length);

    const linked = await fileStoreOf(services).get(owner, stored.file.id);
    expect(linked!.providerFiles).toEqual({ [providerKeyOf(openai())]: id });
    // Linked: no second upload, from the stored record or the one in hand.
    expect(await ensureProviderFile(services, linked!, openai(), signal)).toBe(id);
    expect(await ensureProviderFile(services, stored, openai(), signal)).toBe(id);
    expect(uploads()).toHaveLength(1);
  });

  it("uploads again for another account at the same provider", async () => {
    const stored = await fileStoreOf(services).create(owner, { filename: "a.jsonl", purpose: "batch", body: "{}\n" });
    const signal = new AbortController().signal;
    const first = await ensureProviderFile(services, stored, openai(), signal);
    const other: ProviderTarget = { ...openai(), customHost: `http://localhost:${new URL(mock.url).port}/v1` };
    const second = await ensureProviderFile(services, stored, other, signal);
    expect(second).not.toBe(first);
    const linked = await fileStoreOf(services).get(owner, stored.file.id);
    expect(Object.values(linked!.providerFiles).sort()).toEqual([first, second].sort());
  });

  it("uses Azure OpenAI's files URL, api-key auth and a batch-capable api-version", async () => {
    const signal = new AbortController().signal;
    const cases: Array<[string | undefined, string]> = [
      [undefined, `/openai/files?api-version=${AZURE_FILES_API_VERSION}`],
      ["2024-02-01", `/openai/files?api-version=${AZURE_FILES_API_VERSION}`],
      ["2025-04-01-preview", "/openai/files?api-version=2025-04-01-preview"],
      ["v1", "/openai/v1/files"],
    ];
    for (const [apiVersion, path] of cases) {
      const stored = await fileStoreOf(services).create(owner, {
        filename: "in.jsonl",
        purpose: "fine-tune",
        body: '{"messages":[]}\n',
      });
      const target: ProviderTarget = {
        provider: "azure-openai",
        apiKey,
        customHost: mock.url,
        azure: { resourceName: "unused", apiVersion },
      };
      const id = await ensureProviderFile(services, stored, target, signal);
      const upload = uploads().at(-1)!;
      expect(upload.path).toBe(path);
      expect(upload.headers["api-key"]).toBe(apiKey);
      expect(upload.headers.authorization).toBeUndefined();
      expect(mock.files.get(id)!.purpose).toBe("fine-tune");
    }
  });

  it("answers the provider's refusal with its status and links nothing", async () => {
    const stored = await fileStoreOf(services).create(owner, { filename: "x.jsonl", purpose: "batch", body: "{}\n" });
    const signal = new AbortController().signal;
    const wrongKey: ProviderTarget = { ...openai(), apiKey: "sk-wrong" };
    const refused = await ensureProviderFile(services, stored, wrongKey, signal).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(401);
    expect((refused as HttpError).message).toContain("Incorrect API key");
    expect((refused as HttpError).message).not.toContain("sk-wrong");

    mock.failNextUpload(400, { message: "Invalid file format for Batch API.", param: "file" });
    const invalid = (await ensureProviderFile(services, stored, openai(), signal).catch(
      (e: unknown) => e,
    )) as HttpError;
    expect(invalid.status).toBe(400);
    expect(invalid.message).toBe("Invalid file format for Batch API.");
    expect((await fileStoreOf(services).get(owner, stored.file.id))!.providerFiles).toEqual({});
  });

  it("refuses providers without a Files API, and unreachable providers answer 502", async () => {
    const stored = await fileStoreOf(services).create(owner, { filename: "x.jsonl", purpose: "batch", body: "{}\n" });
    const signal = new AbortController().signal;
    const anthropic = (await ensureProviderFile(services, stored, { provider: "anthropic", apiKey }, signal).catch(
      (e: unknown) => e,
    )) as HttpError;
    expect(anthropic.status).toBe(400);
    expect(anthropic.code).toBe("unsupported_provider");

    const gone = (await ensureProviderFile(
      services,
      stored,
      { provider: "openai", apiKey, customHost: "http://127.0.0.1:9/v1" },
      signal,
    ).catch((e: unknown) => e)) as HttpError;
    expect(gone.status).toBe(502);
  });
});
