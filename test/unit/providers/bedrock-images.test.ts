import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bedrockAdapter } from "../../../core/providers/bedrock/index.ts";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";
import { checkSigV4 } from "../../mocks/bedrock.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/bedrock/${name}`, import.meta.url), "utf8"));

const CREDENTIALS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const TITAN = "amazon.titan-image-generator-v2:0";
const SD35 = "stability.sd3-5-large-v1:0";
const PNG = new UploadedFile("cat.png", "image/png", new Uint8Array([137, 80, 78, 71]));
const MASK = new UploadedFile("mask.png", "image/png", new Uint8Array([1, 2, 3]));

function ctx(route: TransformContext["route"], model: string): TransformContext {
  return {
    target: { provider: "bedrock", aws: { ...CREDENTIALS, region: "us-west-2" } },
    route,
    stream: false,
    model,
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
  };
}

async function build(route: TransformContext["route"], model: string, body: Record<string, any>) {
  const request = await bedrockAdapter.routes[route]!.buildRequest(body, ctx(route, model));
  return { request, json: JSON.parse(request.body as string) };
}

describe("Bedrock Titan Image Generator", () => {
  it("sends TEXT_IMAGE with imageGenerationConfig, signed, to InvokeModel", async () => {
    const { request, json } = await build("image_generations", TITAN, {
      prompt: "a lighthouse",
      n: 2,
      size: "1024x1024",
      quality: "hd",
      seed: 7,
      negative_prompt: "fog",
    });
    expect(request.url).toBe(
      `https://bedrock-runtime.us-west-2.amazonaws.com/model/${encodeURIComponent(TITAN)}/invoke`,
    );
    expect(json).toEqual({
      taskType: "TEXT_IMAGE",
      textToImageParams: { text: "a lighthouse", negativeText: "fog" },
      imageGenerationConfig: { numberOfImages: 2, width: 1024, height: 1024, quality: "premium", seed: 7 },
    });
    const url = new URL(request.url);
    const check = await checkSigV4(
      { method: "POST", path: url.pathname, headers: request.headers, body: Buffer.from(request.body as string) },
      CREDENTIALS,
    );
    expect(check).toMatchObject({ ok: true, region: "us-west-2" });
  });

  it("maps OpenAI sizes Titan lacks to a supported one of the same shape", async () => {
    const { json } = await build("image_generations", TITAN, { prompt: "x", size: "1792x1024" });
    expect(json.imageGenerationConfig).toMatchObject({ width: 1152, height: 640 });
  });

  it("edits with a mask are INPAINTING, without one IMAGE_VARIATION; variations too", async () => {
    const inpaint = await build("image_edits", TITAN, { prompt: "add a boat", image: [PNG], mask: MASK, n: 1 });
    expect(inpaint.json).toMatchObject({
      taskType: "INPAINTING",
      inPaintingParams: { image: PNG.base64(), maskImage: MASK.base64(), text: "add a boat" },
      imageGenerationConfig: { numberOfImages: 1 },
    });
    const edit = await build("image_edits", TITAN, { prompt: "in winter", image: [PNG] });
    expect(edit.json).toMatchObject({
      taskType: "IMAGE_VARIATION",
      imageVariationParams: { images: [PNG.base64()], text: "in winter" },
    });
    const variation = await build("image_variations", TITAN, { image: PNG, n: 3 });
    expect(variation.json).toEqual({
      taskType: "IMAGE_VARIATION",
      imageVariationParams: { images: [PNG.base64()] },
      imageGenerationConfig: { numberOfImages: 3 },
    });
  });

  it("answers OpenAI's b64_json list and throws a content-policy 400 for Titan's error", () => {
    const route = bedrockAdapter.routes.image_generations!;
    const answer = route.transformResponse(fixture("titan-image-response.json"), ctx("image_generations", TITAN));
    expect(answer).toEqual({
      created: 1_700_000_000,
      data: [{ b64_json: fixture("titan-image-response.json").images[0] }, { b64_json: expect.any(String) }],
    });
    let error: unknown;
    try {
      route.transformResponse(fixture("titan-image-blocked.json"), ctx("image_generations", TITAN));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, code: "content_policy_violation" });
  });

  it("meters images by resolution class and quality", () => {
    const route = bedrockAdapter.routes.image_generations!;
    const usage = route.usageOf!(
      fixture("titan-image-response.json"),
      { prompt: "x", size: "512x512", quality: "hd" },
      ctx("image_generations", TITAN),
    );
    expect(usage).toEqual({ units: { images: 2 }, priceKey: { size: "512x512", quality: "premium" } });
  });
});

describe("Bedrock Nova Canvas", () => {
  it("keeps a size Nova Canvas accepts as it is", async () => {
    const { json } = await build("image_generations", "amazon.nova-canvas-v1:0", { prompt: "x", size: "1536x1024" });
    expect(json.imageGenerationConfig).toMatchObject({ width: 1536, height: 1024 });
  });
});

describe("Stability models on Bedrock", () => {
  it("sends text-to-image with the nearest aspect ratio", async () => {
    const { json } = await build("image_generations", SD35, {
      prompt: "a fox",
      size: "1792x1024",
      seed: 3,
      negative_prompt: "blur",
    });
    expect(json).toEqual({
      prompt: "a fox",
      mode: "text-to-image",
      aspect_ratio: "16:9",
      output_format: "png",
      seed: 3,
      negative_prompt: "blur",
    });
  });

  it("Ultra and Core take no mode; edits are image-to-image with a strength", async () => {
    const ultra = await build("image_generations", "stability.stable-image-ultra-v1:1", { prompt: "a fox" });
    expect(ultra.json).toEqual({ prompt: "a fox", output_format: "png" });
    const edit = await build("image_edits", SD35, { prompt: "a fox", image: [PNG], strength: "0.4" });
    expect(edit.json).toEqual({
      prompt: "a fox",
      mode: "image-to-image",
      image: PNG.base64(),
      strength: 0.4,
      output_format: "png",
    });
  });

  it("refuses n > 1 naming n", async () => {
    await expect(build("image_generations", SD35, { prompt: "a fox", n: 2 })).rejects.toMatchObject({
      status: 400,
      param: "n",
    });
  });

  it("answers b64_json and turns a finish reason into a content-policy 400", () => {
    const route = bedrockAdapter.routes.image_generations!;
    expect(route.transformResponse(fixture("stability-image-response.json"), ctx("image_generations", SD35))).toEqual({
      created: 1_700_000_000,
      data: [{ b64_json: fixture("stability-image-response.json").images[0] }],
    });
    expect(() =>
      route.transformResponse(fixture("stability-image-filtered.json"), ctx("image_generations", SD35)),
    ).toThrow(/Filter reason/);
  });

  it("refuses an image model it does not know, naming model", async () => {
    await expect(build("image_generations", "meta.llama3-70b-instruct-v1:0", { prompt: "x" })).rejects.toMatchObject({
      status: 400,
      param: "model",
    });
  });
});
