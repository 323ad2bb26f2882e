import { crc32, deflateSync } from "node:zlib";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clearVertexTokenCache } from "../../core/providers/vertex/auth.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { formOf, PNG_1X1, startImageProvidersMock } from "../mocks/images.ts";
import { createTestServiceAccount } from "../mocks/vertex.ts";

/**
 * The Images family end to end: the openai SDK's images.generate / edit / createVariation through the gateway to
 * mock upstreams of OpenAI, Azure OpenAI, Bedrock (SigV4), Vertex AI Imagen (OAuth) and Stability AI, a fallback
 * from a failing provider, the log's units and cost, 400s naming the param, and workspace isolation of the log.
 */

const AWS = { accessKeyId: "AKIDIMAGES", secretAccessKey: "aws-secret-images-0123456789" };
const AZURE_KEY = "azure-images-key-0123";
const STABILITY_KEY = "sk-stability-images-0123";
const VERTEX_TOKEN = "ya29.images-token";
const OPENAI_KEY = "sk-openai-images-0123";

let gateway: TestGateway;
let upstream: MockServer;
let serviceAccountJson: string;

/** A real PNG (8-bit RGBA, one colour), so the SDK and the mock see an actual image file. */
function makePng(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 6, 0, 0, 0], 8);
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(width * 4, 0x7f)]);
  const pixels = Buffer.concat(Array.from({ length: height }, () => row));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(pixels)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function client(headers: Record<string, string>, apiKey = "unused"): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
    maxRetries: 0,
  });
}

const openai = () =>
  client({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${upstream.url}/openai/v1` }, OPENAI_KEY);

/** The log of a trace id (polled: logs are written after the answer), as the logs API returns it. */
async function logOf(trace: string, key = gateway.adminKey): Promise<any> {
  const find = async () => {
    const list = await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, { headers: { "x-gateway-api-key": key } });
    const id = (await list.json()).data?.[0]?.id;
    if (!id) return undefined;
    const one = await fetch(`${gateway.url}/v1/logs/${id}`, { headers: { "x-gateway-api-key": key } });
    return one.json();
  };
  await expect.poll(find, { timeout: 5000 }).toBeDefined();
  return find();
}

const traced = (name: string) => {
  const trace = `${name}-${Date.now()}-${Math.random().toString(36).slice(2, 6)}`;
  return { trace, options: { headers: { "x-gateway-trace-id": trace } } };
};

beforeAll(async () => {
  upstream = await startImageProvidersMock({
    azureKey: AZURE_KEY,
    stabilityKey: STABILITY_KEY,
    vertexToken: VERTEX_TOKEN,
    aws: AWS,
  });
  serviceAccountJson = (await createTestServiceAccount(`${upstream.url}/token`)).json;
  clearVertexTokenCache();
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("OpenAI images through the gateway", () => {
  it("generate: DALL-E 3 answer passes through; the log has units.images and the per-image cost", async () => {
    const { trace, options } = traced("img-openai");
    const result = await openai().images.generate(
      { model: "dall-e-3", prompt: "a lighthouse at dusk", size: "1792x1024", quality: "hd", n: 1 },
      options,
    );
    expect(result.data?.[0]?.b64_json).toBe(PNG_1X1);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/openai/v1/images/generations");
    expect(sent.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(sent.json()).toMatchObject({ model: "dall-e-3", prompt: "a lighthouse at dusk", size: "1792x1024" });
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "openai", status: 200, units: { images: 1 } });
    expect(log.cost).toBeCloseTo(0.12);
    expect(JSON.stringify(log)).not.toContain(OPENAI_KEY);
  });

  it("generate: gpt-image-1 is priced on the tokens its answer reports", async () => {
    const { trace, options } = traced("img-gpt-image");
    await openai().images.generate({ model: "gpt-image-1", prompt: "a fox" }, options);
    const log = await logOf(trace);
    expect(log).toMatchObject({ units: { images: 1 }, usage: { promptTokens: 100, completionTokens: 1000 } });
    expect(log.cost).toBeCloseTo((100 * 5 + 1000 * 40) / 1_000_000, 8);
  });

  it("edit: a real PNG and a mask reach the provider as files", async () => {
    const { trace, options } = traced("img-edit");
    const png = makePng(4, 4);
    const result = await openai().images.edit(
      {
        model: "dall-e-2",
        image: await toFile(png, "room.png", { type: "image/png" }),
        mask: await toFile(makePng(4, 4), "mask.png", { type: "image/png" }),
        prompt: "add a window",
        size: "256x256",
        n: 2,
      },
      options,
    );
    expect(result.data).toHaveLength(2);
    const form = await formOf(upstream.requests.at(-1)!);
    const image = form.get("image") ?? form.get("image[]");
    expect(Buffer.from(await (image as File).arrayBuffer())).toEqual(png);
    expect(form.get("prompt")).toBe("add a window");
    expect(form.get("mask")).toBeInstanceOf(File);
    const log = await logOf(trace);
    expect(log).toMatchObject({ units: { images: 2 } });
    expect(log.cost).toBeCloseTo(0.032);
  });

  it("createVariation", async () => {
    const { trace, options } = traced("img-variation");
    const result = await openai().images.createVariation(
      { model: "dall-e-2", image: await toFile(makePng(2, 2), "a.png", { type: "image/png" }), n: 3 },
      options,
    );
    expect(result.data).toHaveLength(3);
    expect(upstream.requests.at(-1)!.path).toBe("/openai/v1/images/variations");
    const log = await logOf(trace);
    expect(log.units).toEqual({ images: 3 });
    expect(log.cost).toBeCloseTo(0.06);
  });
});

describe("bad bodies answer 400 naming the param", () => {
  it("n: 11", async () => {
    const error = await openai()
      .images.generate({ model: "dall-e-2", prompt: "x", n: 11 })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ param: "n", type: "invalid_request_error" });
  });

  it("missing prompt", async () => {
    const error = await openai()
      .images.generate({ model: "dall-e-2" } as never)
      .catch((caught) => caught);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: "prompt" });
  });

  it("edits without an image file", async () => {
    const form = new FormData();
    form.set("prompt", "add a window");
    form.set("model", "dall-e-2");
    const response = await fetch(`${gateway.url}/v1/images/edits`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/openai/v1`,
        authorization: `Bearer ${OPENAI_KEY}`,
      },
      body: form,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "image" });
  });
});

describe("other providers", () => {
  it("Azure OpenAI: deployment URL, api-version, api-key", async () => {
    const { trace, options } = traced("img-azure");
    const azure = client(
      {
        "x-gateway-provider": "azure-openai",
        "x-gateway-custom-host": upstream.url,
        "x-gateway-azure-deployment-id": "dalle3",
      },
      AZURE_KEY,
    );
    const result = await azure.images.generate({ model: "dall-e-3", prompt: "a kite", n: 1 }, options);
    expect(result.data?.[0]?.b64_json).toBe(PNG_1X1);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/openai/deployments/dalle3/images/generations?api-version=2024-10-21");
    expect(sent.headers["api-key"]).toBe(AZURE_KEY);
    expect(sent.headers.authorization).toBeUndefined();
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "azure-openai", units: { images: 1 } });
    expect(log.cost).toBeCloseTo(0.04);
  });

  const bedrock = () =>
    client({
      "x-gateway-provider": "bedrock",
      "x-gateway-custom-host": `${upstream.url}/bedrock`,
      "x-gateway-aws-access-key-id": AWS.accessKeyId,
      "x-gateway-aws-secret-access-key": AWS.secretAccessKey,
      "x-gateway-aws-region": "us-east-1",
    });

  it("Bedrock Titan: signed InvokeModel, b64_json even when a URL was asked for, priced per image", async () => {
    const { trace, options } = traced("img-titan");
    const result = await bedrock().images.generate(
      { model: "amazon.titan-image-generator-v1", prompt: "a bridge", n: 2, size: "512x512", response_format: "url" },
      options,
    );
    expect(result.data?.map((image) => image.b64_json)).toEqual([PNG_1X1, PNG_1X1]);
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDIMAGES\/\d{8}\/us-east-1\/bedrock\//);
    expect(sent.json()).toMatchObject({
      taskType: "TEXT_IMAGE",
      textToImageParams: { text: "a bridge" },
      imageGenerationConfig: { numberOfImages: 2, width: 512, height: 512 },
    });
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "bedrock", units: { images: 2 } });
    expect(log.cost).toBeCloseTo(0.016);
    expect(JSON.stringify(log)).not.toContain(AWS.secretAccessKey);
  });

  it("Bedrock Titan edit with a mask is INPAINTING", async () => {
    await bedrock().images.edit({
      model: "amazon.titan-image-generator-v2:0",
      image: await toFile(makePng(4, 4), "room.png", { type: "image/png" }),
      mask: await toFile(makePng(4, 4), "mask.png", { type: "image/png" }),
      prompt: "a cat on the sofa",
    });
    expect(upstream.requests.at(-1)!.json()).toMatchObject({
      taskType: "INPAINTING",
      inPaintingParams: { text: "a cat on the sofa", image: makePng(4, 4).toString("base64") },
    });
  });

  it("Bedrock Titan variation is IMAGE_VARIATION", async () => {
    const result = await bedrock().images.createVariation({
      model: "amazon.titan-image-generator-v1",
      image: await toFile(makePng(2, 2), "a.png", { type: "image/png" }),
      n: 2,
    });
    expect(result.data).toHaveLength(2);
    expect(upstream.requests.at(-1)!.json()).toMatchObject({ taskType: "IMAGE_VARIATION" });
  });

  it("Bedrock Stability: text-to-image with an aspect ratio", async () => {
    const { trace, options } = traced("img-bedrock-sd");
    const result = await bedrock().images.generate(
      { model: "stability.sd3-5-large-v1:0", prompt: "a fox", size: "1792x1024" },
      options,
    );
    expect(result.data?.[0]?.b64_json).toBe(PNG_1X1);
    expect(upstream.requests.at(-1)!.json()).toMatchObject({ mode: "text-to-image", aspect_ratio: "16:9" });
    expect((await logOf(trace)).cost).toBeCloseTo(0.08);
  });

  it("Vertex AI Imagen: OAuth token from the service account, :predict, priced per image", async () => {
    const { trace, options } = traced("img-vertex");
    const vertex = client({
      "x-gateway-provider": "vertex-ai",
      "x-gateway-custom-host": `${upstream.url}/vertex`,
      "x-gateway-vertex-region": "us-central1",
      "x-gateway-vertex-service-account-json": serviceAccountJson,
    });
    const result = await vertex.images.generate(
      { model: "imagen-4.0-generate-001", prompt: "a garden", n: 2, size: "1024x1024" },
      options,
    );
    expect(result.data).toHaveLength(2);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe(
      "/vertex/v1/projects/mock-project/locations/us-central1/publishers/google/models/imagen-4.0-generate-001:predict",
    );
    expect(sent.headers.authorization).toBe(`Bearer ${VERTEX_TOKEN}`);
    expect(sent.json()).toEqual({
      instances: [{ prompt: "a garden" }],
      parameters: { sampleCount: 2, aspectRatio: "1:1" },
    });
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "vertex-ai", units: { images: 2 } });
    expect(log.cost).toBeCloseTo(0.08);
    expect(JSON.stringify(log)).not.toContain("PRIVATE KEY");
  });

  const stability = () =>
    client(
      { "x-gateway-provider": "stability-ai", "x-gateway-custom-host": `${upstream.url}/stability` },
      STABILITY_KEY,
    );

  it("Stability AI: generate/sd3 as multipart with the model field; credits priced in USD", async () => {
    const { trace, options } = traced("img-stability");
    const result = await stability().images.generate(
      { model: "sd3.5-large", prompt: "a castle", size: "1024x1792" },
      options,
    );
    expect(result.data?.[0]?.b64_json).toBe(PNG_1X1);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/stability/v2beta/stable-image/generate/sd3");
    const form = await formOf(sent);
    expect(Object.fromEntries(form)).toMatchObject({ model: "sd3.5-large", prompt: "a castle", aspect_ratio: "9:16" });
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "stability-ai", units: { images: 1 } });
    expect(log.cost).toBeCloseTo(0.065);
    expect(JSON.stringify(log)).not.toContain(STABILITY_KEY);
  });

  it("Stability AI: edits are inpainting", async () => {
    const { trace, options } = traced("img-stability-edit");
    await stability().images.edit(
      {
        model: "stable-image-core",
        image: await toFile(makePng(4, 4), "room.png", { type: "image/png" }),
        prompt: "a plant",
      },
      options,
    );
    expect(upstream.requests.at(-1)!.path).toBe("/stability/v2beta/stable-image/edit/inpaint");
    expect((await logOf(trace)).cost).toBeCloseTo(0.05);
  });

  it("Stability AI: n > 1 is a 400 naming n", async () => {
    const error = await stability()
      .images.generate({ model: "stable-image-core", prompt: "x", n: 2 })
      .catch((caught) => caught);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: "n" });
  });
});

describe("fallback and isolation", () => {
  it("falls back from a failing provider to the next target; the log keeps both attempts", async () => {
    const { trace, options } = traced("img-fallback");
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        {
          provider: "stability-ai",
          api_key: STABILITY_KEY,
          custom_host: `${upstream.url}/broken`,
          override_params: { model: "stable-image-core" },
        },
        { provider: "openai", api_key: OPENAI_KEY, custom_host: `${upstream.url}/openai/v1` },
      ],
    };
    const fallback = client({ "x-gateway-config": JSON.stringify(config) });
    const response = await fallback.images
      .generate({ model: "dall-e-2", prompt: "a boat", size: "512x512" }, options)
      .withResponse();
    expect(response.data.data?.[0]?.b64_json).toBe(PNG_1X1);
    expect(response.response.headers.get("x-gateway-provider")).toBe("openai");
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "openai", status: 200, units: { images: 1 } });
    expect(log.cost).toBeCloseTo(0.018);
    expect(log.attempts?.map((attempt: any) => [attempt.provider, attempt.status])).toEqual([
      ["stability-ai", 503],
      ["openai", 200],
    ]);
  });

  it("another workspace cannot read the log", async () => {
    const { trace, options } = traced("img-isolation");
    await openai().images.generate({ model: "dall-e-2", prompt: "a secret garden" }, options);
    const log = await logOf(trace);
    const other = await seedWorkspace(gateway, "Images other");
    const { key } = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "images-other",
      workspace_id: other.id,
      scopes: ["logs.list", "logs.view"],
    });
    const one = await fetch(`${gateway.url}/v1/logs/${log.id}`, { headers: { "x-gateway-api-key": key } });
    expect(one.status).toBe(404);
    const list = await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, { headers: { "x-gateway-api-key": key } });
    expect(list.status).toBe(200);
    expect((await list.json()).data).toEqual([]);
  });
});
