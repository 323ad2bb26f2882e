import { createHash, randomBytes } from "node:crypto";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { chatLine, fileText, jsonl, parseLines, runBatchToEnd } from "../helpers/batches.ts";
import { type AwsGateway, startAwsGateway } from "../helpers/aws-gateway.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { echoChat } from "../helpers/echo-upstream.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { type OpenAIFilesMock, startOpenAIFilesMock } from "../mocks/openai-files.ts";

/**
 * OpenAI's Uploads API through the official `openai` client (uploads.create, uploads.parts.create,
 * uploads.complete, uploads.cancel): a 20 MB file in three parts, parts joined in part_ids order, the total
 * checked, cancel, workspace isolation, the completed file as a gateway-run batch's input, a copy at the provider
 * the create named; and the same create/parts/complete on the AWS stores.
 */

const PROVIDER_KEY = "sk-provider-uploads";
let gateway: TestGateway;
let upstream: OpenAIMock;
let providerFiles: OpenAIFilesMock;
let keyA: string;
let keyB: string;

const MB = 1024 * 1024;
const sha = (bytes: Uint8Array | string) => createHash("sha256").update(bytes).digest("hex");

const clientOf = (url: string, key: string, headers: Record<string, string> = {}) =>
  new OpenAI({
    apiKey: PROVIDER_KEY,
    baseURL: `${url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": key, ...headers },
  });

beforeAll(async () => {
  upstream = await startOpenAIMock({ guard: echoChat });
  providerFiles = await startOpenAIFilesMock({ apiKey: PROVIDER_KEY });
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  for (const [name, assign] of [
    ["Uploads A", (key: string) => (keyA = key)],
    ["Uploads B", (key: string) => (keyB = key)],
  ] as const) {
    const workspace = await seedWorkspace(gateway, name);
    const created = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name,
      workspace_id: workspace.id,
      scopes: ["*"],
    });
    assign(created.key);
  }
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await providerFiles?.close();
});

/** Sends `chunks` as parts of a new upload; the upload and its part ids in sending order. */
async function uploadParts(client: OpenAI, chunks: Buffer[], filename = "big.jsonl", purpose: "batch" = "batch") {
  const total = chunks.reduce((sum, chunk) => sum + chunk.length, 0);
  const upload = await client.uploads.create({ filename, purpose, bytes: total, mime_type: "application/jsonl" });
  const partIds: string[] = [];
  for (const [i, chunk] of chunks.entries()) {
    const part = await client.uploads.parts.create(upload.id, { data: await toFile(chunk, `part-${i}`) });
    expect(part).toMatchObject({ object: "upload.part", upload_id: upload.id });
    partIds.push(part.id);
  }
  return { upload, partIds };
}

describe("uploads on the local gateway", () => {
  it("joins a 20 MB file sent in three parts into one file with the same bytes", async () => {
    const client = clientOf(gateway.url, keyA);
    const chunks = [randomBytes(8 * MB), randomBytes(8 * MB), randomBytes(4 * MB)];
    const whole = Buffer.concat(chunks);
    const { upload, partIds } = await uploadParts(client, chunks);
    expect(upload).toMatchObject({ object: "upload", status: "pending", bytes: 20 * MB, file: null });
    expect(upload.expires_at).toBe(upload.created_at + 3600);

    const md5 = createHash("md5").update(whole).digest("hex");
    const done = await client.uploads.complete(upload.id, { part_ids: partIds, md5 });
    expect(done.status).toBe("completed");
    expect(done.file).toMatchObject({ object: "file", bytes: 20 * MB, purpose: "batch", filename: "big.jsonl" });
    const content = Buffer.from(await (await client.files.content(done.file!.id)).arrayBuffer());
    expect(sha(content)).toBe(sha(whole));
    expect(await client.files.retrieve(done.file!.id)).toEqual(done.file);

    // Completed once: a second complete makes no second file.
    await expect(client.uploads.complete(upload.id, { part_ids: partIds })).rejects.toMatchObject({ status: 400 });
  }, 120_000);

  it("orders the file by part_ids, not by the order the parts arrived in", async () => {
    const client = clientOf(gateway.url, keyA);
    const { upload, partIds } = await uploadParts(
      client,
      ["third\n", "first\n", "second\n"].map((s) => Buffer.from(s)),
    );
    const done = await client.uploads.complete(upload.id, { part_ids: [partIds[1]!, partIds[2]!, partIds[0]!] });
    expect(await (await client.files.content(done.file!.id)).text()).toBe("first\nsecond\nthird\n");
  });

  it("refuses a complete whose parts do not total the declared bytes, and a part past them", async () => {
    const client = clientOf(gateway.url, keyA);
    const upload = await client.uploads.create({
      filename: "short.jsonl",
      purpose: "batch",
      bytes: 100,
      mime_type: "application/jsonl",
    });
    const part = await client.uploads.parts.create(upload.id, { data: await toFile(randomBytes(60), "p") });
    await expect(client.uploads.complete(upload.id, { part_ids: [part.id] })).rejects.toMatchObject({
      status: 400,
      param: "part_ids",
    });
    await expect(
      client.uploads.parts.create(upload.id, { data: await toFile(randomBytes(41), "p") }),
    ).rejects.toMatchObject({ status: 400 });
    await expect(
      client.uploads.create({ filename: "x", purpose: "batch_output" as "batch", bytes: 1, mime_type: "text/plain" }),
    ).rejects.toMatchObject({ status: 400, param: "purpose" });
    await expect(
      client.uploads.create({ filename: "x", purpose: "batch", bytes: 600 * MB, mime_type: "text/plain" }),
    ).rejects.toMatchObject({ status: 400, param: "bytes" });
  });

  it("cancels: no more parts, no complete", async () => {
    const client = clientOf(gateway.url, keyA);
    const { upload, partIds } = await uploadParts(client, [Buffer.from("abc")]);
    const cancelled = await client.uploads.cancel(upload.id);
    expect(cancelled).toMatchObject({ id: upload.id, status: "cancelled", file: null });
    await expect(client.uploads.complete(upload.id, { part_ids: partIds })).rejects.toMatchObject({ status: 400 });
    await expect(
      client.uploads.parts.create(upload.id, { data: await toFile(Buffer.from("d"), "p") }),
    ).rejects.toMatchObject({ status: 400 });
  });

  it("answers 404 to another workspace on every route", async () => {
    const owner = clientOf(gateway.url, keyA);
    const other = clientOf(gateway.url, keyB);
    const { upload, partIds } = await uploadParts(owner, [Buffer.from("mine")]);
    await expect(
      other.uploads.parts.create(upload.id, { data: await toFile(Buffer.from("x"), "p") }),
    ).rejects.toMatchObject({ status: 404 });
    await expect(other.uploads.complete(upload.id, { part_ids: partIds })).rejects.toMatchObject({ status: 404 });
    await expect(other.uploads.cancel(upload.id)).rejects.toMatchObject({ status: 404 });
    // Still the owner's, untouched.
    const done = await owner.uploads.complete(upload.id, { part_ids: partIds });
    expect(done.status).toBe("completed");
  });

  it("gives a file a gateway-run batch takes as its input", async () => {
    const client = clientOf(gateway.url, keyA);
    const text = jsonl(["one", "two", "three"].map((word, i) => chatLine(`req-${i}`, word)));
    const half = Math.floor(text.length / 2);
    const { upload, partIds } = await uploadParts(client, [
      Buffer.from(text.slice(0, half)),
      Buffer.from(text.slice(half)),
    ]);
    const done = await client.uploads.complete(upload.id, { part_ids: partIds });

    const batchClient = clientOf(gateway.url, keyA, {
      "x-gateway-provider": "openai",
      "x-gateway-batch-mode": "gateway",
      "x-gateway-custom-host": `${upstream.url}/v1`,
    });
    const batch = await batchClient.batches.create({
      input_file_id: done.file!.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const finished = await runBatchToEnd(gateway, batchClient, batch.id);
    expect(finished.status).toBe("completed");
    expect(finished.request_counts).toEqual({ total: 3, completed: 3, failed: 0 });
    const output = parseLines(await fileText(batchClient, finished.output_file_id!));
    expect(output.map((line) => line.response.body.choices[0].message.content).sort()).toEqual([
      "echo: one",
      "echo: three",
      "echo: two",
    ]);
  }, 60_000);

  it("copies the completed file to the provider the create named", async () => {
    const client = clientOf(gateway.url, keyA, {
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${providerFiles.url}/v1`,
    });
    const text = jsonl([chatLine("a", "hello")]);
    const { upload, partIds } = await uploadParts(client, [Buffer.from(text)], "native-upload.jsonl");
    await client.uploads.complete(upload.id, { part_ids: partIds });
    const copy = [...providerFiles.files.values()].find((file) => file.filename === "native-upload.jsonl");
    expect(copy?.sha256).toBe(sha(text));
    expect(copy?.purpose).toBe("batch");
  });
});

describe("uploads on the AWS stores (dynalite, S3 via fauxqs)", () => {
  let aws: AwsGateway;
  beforeAll(async () => {
    aws = await startAwsGateway(inject("emulators"));
  });
  afterAll(async () => {
    await aws?.close();
  });

  it("creates, takes parts and completes into one file", async () => {
    const client = clientOf(aws.url, aws.adminKey);
    const chunks = [randomBytes(6 * MB), randomBytes(3 * MB)];
    const whole = Buffer.concat(chunks);
    const { upload, partIds } = await uploadParts(client, chunks);
    const done = await client.uploads.complete(upload.id, { part_ids: partIds });
    expect(done.file?.bytes).toBe(whole.length);
    const content = Buffer.from(await (await client.files.content(done.file!.id)).arrayBuffer());
    expect(sha(content)).toBe(sha(whole));
  }, 120_000);
});
