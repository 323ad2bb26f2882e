import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { vertexAdapter } from "../../../core/providers/vertex/index.ts";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/vertex/${name}`, import.meta.url), "utf8"));

const PNG = new UploadedFile("cat.png", "image/png", new Uint8Array([137, 80, 78, 71]));
const MASK = new UploadedFile("mask.png", "image/png", new Uint8Array([9, 9]));

function ctx(route: TransformContext["route"], model = "imagen-4.0-generate-001"): TransformContext {
  return {
    target: {
      provider: "vertex-ai",
      apiKey: "ya29.given-token",
      vertex: { projectId: "my-project", region: "europe-west4" },
    },
    route,
    stream: false,
    model,
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
  };
}

async function build(route: TransformContext["route"], body: Record<string, any>, model?: string) {
  const request = await vertexAdapter.routes[route]!.buildRequest(body, ctx(route, model));
  return { request, json: JSON.parse(request.body as string) };
}

describe("Vertex AI Imagen", () => {
  it("generations: :predict with instances and parameters, OAuth bearer", async () => {
    const { request, json } = await build("image_generations", {
      prompt: "a red bicycle",
      n: 2,
      size: "1792x1024",
      output_format: "jpeg",
      output_compression: 80,
      seed: 5,
    });
    expect(request.url).toBe(
      "https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4/publishers/google/models/imagen-4.0-generate-001:predict",
    );
    expect(request.headers.authorization).toBe("Bearer ya29.given-token");
    expect(json).toEqual({
      instances: [{ prompt: "a red bicycle" }],
      parameters: {
        sampleCount: 2,
        aspectRatio: "16:9",
        seed: 5,
        addWatermark: false,
        outputOptions: { mimeType: "image/jpeg", compressionQuality: 80 },
      },
    });
  });

  it("edits: raw and mask reference images, inpaint insertion; a 400 naming mask without one", async () => {
    const { json } = await build(
      "image_edits",
      { prompt: "a hat", image: [PNG], mask: MASK, n: 1 },
      "imagen-3.0-capability-001",
    );
    expect(json).toEqual({
      instances: [
        {
          prompt: "a hat",
          referenceImages: [
            {
              referenceType: "REFERENCE_TYPE_RAW",
              referenceId: 1,
              referenceImage: { bytesBase64Encoded: PNG.base64() },
            },
            {
              referenceType: "REFERENCE_TYPE_MASK",
              referenceId: 2,
              referenceImage: { bytesBase64Encoded: MASK.base64() },
              maskImageConfig: { maskMode: "MASK_MODE_USER_PROVIDED" },
            },
          ],
        },
      ],
      parameters: { sampleCount: 1, editMode: "EDIT_MODE_INPAINT_INSERTION" },
    });
    await expect(build("image_edits", { prompt: "a hat", image: [PNG] })).rejects.toMatchObject({
      status: 400,
      param: "mask",
    });
  });

  it("answers b64_json from predictions; filtered predictions only are a content-policy 400", () => {
    const route = vertexAdapter.routes.image_generations!;
    const answer = route.transformResponse(fixture("imagen-predict-response.json"), ctx("image_generations"));
    expect(answer).toEqual({
      created: 1_700_000_000,
      data: fixture("imagen-predict-response.json").predictions.map((p: any) => ({ b64_json: p.bytesBase64Encoded })),
    });
    let error: unknown;
    try {
      route.transformResponse(fixture("imagen-predict-filtered.json"), ctx("image_generations"));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({ status: 400, code: "content_policy_violation" });
  });

  it("has no variations route", () => {
    expect(vertexAdapter.routes.image_variations).toBeUndefined();
  });
});
