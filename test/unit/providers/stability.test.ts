import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { stabilityAdapter } from "../../../core/providers/stability/index.ts";
import type { TransformContext } from "../../../core/providers/types.ts";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";

const fixture = (name: string) => readFileSync(new URL(`../../fixtures/stability/${name}`, import.meta.url), "utf8");

const PNG = new UploadedFile("cat.png", "image/png", new Uint8Array([137, 80, 78, 71]));

function ctx(route: TransformContext["route"], model: string | undefined): TransformContext {
  return {
    target: { provider: "stability-ai", apiKey: "sk-stability-secret" },
    route,
    stream: false,
    model: model as string,
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
  };
}

/** The upstream request and its multipart form read back. */
async function build(route: TransformContext["route"], body: Record<string, any>) {
  const request = await stabilityAdapter.routes[route]!.buildRequest(body, ctx(route, body.model));
  const form = await new Response(request.body as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": request.headers["content-type"]! },
  }).formData();
  return { request, form };
}

describe("Stability AI", () => {
  it("sd3 models go to /generate/sd3 with the model field, size as aspect_ratio, JSON answers", async () => {
    const { request, form } = await build("image_generations", {
      model: "sd3.5-large",
      prompt: "a castle",
      size: "1024x1792",
      seed: 11,
      negative_prompt: "people",
    });
    expect(request.url).toBe("https://api.stability.ai/v2beta/stable-image/generate/sd3");
    expect(request.headers).toMatchObject({ authorization: "Bearer sk-stability-secret", accept: "application/json" });
    expect(Object.fromEntries(form)).toEqual({
      prompt: "a castle",
      model: "sd3.5-large",
      negative_prompt: "people",
      seed: "11",
      output_format: "png",
      aspect_ratio: "9:16",
    });
  });

  it("ultra and core have their own endpoints; core is the default", async () => {
    expect((await build("image_generations", { model: "stable-image-ultra", prompt: "x" })).request.url).toMatch(
      /\/generate\/ultra$/,
    );
    const core = await build("image_generations", { prompt: "x" });
    expect(core.request.url).toMatch(/\/generate\/core$/);
    expect(core.form.get("model")).toBeNull();
  });

  it("edits are inpainting with the image and mask files", async () => {
    const mask = new UploadedFile("mask.png", "image/png", new Uint8Array([0, 0, 0]));
    const { request, form } = await build("image_edits", { prompt: "a moon", image: [PNG], mask, n: 1 });
    expect(request.url).toBe("https://api.stability.ai/v2beta/stable-image/edit/inpaint");
    const image = form.get("image") as File;
    expect(new Uint8Array(await image.arrayBuffer())).toEqual(PNG.bytes);
    expect((form.get("mask") as File).size).toBe(3);
    expect(form.get("prompt")).toBe("a moon");
  });

  it("refuses n > 1 and unknown models, naming the param", async () => {
    await expect(build("image_generations", { prompt: "x", n: 2 })).rejects.toMatchObject({ status: 400, param: "n" });
    await expect(build("image_generations", { model: "dall-e-3", prompt: "x" })).rejects.toMatchObject({
      status: 400,
      param: "model",
    });
  });

  it("answers b64_json; CONTENT_FILTERED is a content-policy 400", () => {
    const route = stabilityAdapter.routes.image_generations!;
    const upstream = JSON.parse(fixture("generate-response.json"));
    expect(route.transformResponse(upstream, ctx("image_generations", "sd3.5-large"))).toEqual({
      created: 1_700_000_000,
      data: [{ b64_json: upstream.image }],
    });
    expect(() =>
      route.transformResponse({ ...upstream, finish_reason: "CONTENT_FILTERED" }, ctx("image_generations", "x")),
    ).toThrow(/refused/);
  });

  it("maps its error shape to OpenAI's", () => {
    expect(stabilityAdapter.mapError!(400, fixture("error-400.json"))).toEqual({
      message: "prompt: cannot be empty",
      type: "invalid_request_error",
      code: "bad_request",
      param: null,
    });
  });

  it("meters one image; edits priced as inpainting", () => {
    const route = stabilityAdapter.routes.image_edits!;
    expect(route.usageOf!({}, {}, ctx("image_edits", undefined))).toEqual({
      units: { images: 1 },
      priceKey: { quality: "inpaint" },
    });
  });
});
