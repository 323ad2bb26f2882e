import { contentPolicyError, imagesAnswer } from "../images/answer.ts";
import { nearestAspectRatio } from "../images/size.ts";
import { type RouteAdapter, type RouteKind, type TransformContext, UpstreamError } from "../types.ts";
import type { UploadedFile } from "../uploaded-file.ts";
import { vertexAccessToken } from "./auth.ts";

/**
 * Imagen on Vertex AI through `:predict` (https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api):
 *   generations: `{instances: [{prompt}], parameters: {sampleCount, aspectRatio, negativePrompt, seed, outputOptions}}`
 *   edits (imagen-3.0-capability-001, https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/imagen-api-edit):
 *     `{instances: [{prompt, referenceImages: [RAW image, MASK image]}], parameters: {editMode, sampleCount}}`;
 *     Imagen's edit needs a mask (mask-free editing is not offered), so an edit without one is a 400 naming `mask`.
 * The answer `{predictions: [{bytesBase64Encoded, mimeType}]}` becomes OpenAI's `{created, data: [{b64_json}]}`;
 * predictions removed by Responsible AI filters carry `raiFilteredReason` instead of bytes.
 */

type Json = Record<string, any>;

/** Aspect ratios Imagen takes. */
const IMAGEN_RATIOS = ["1:1", "9:16", "16:9", "3:4", "4:3"] as const;

function numberField(value: unknown): number | undefined {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) ? number : undefined;
}

function commonParameters(body: Json): Json {
  const parameters: Json = { sampleCount: numberField(body.n) ?? 1 };
  if (typeof body.negative_prompt === "string") parameters.negativePrompt = body.negative_prompt;
  const seed = numberField(body.seed);
  // Imagen accepts a seed only with the watermark off.
  if (seed !== undefined) Object.assign(parameters, { seed, addWatermark: false });
  if (body.output_format === "jpeg" || body.output_format === "png") {
    parameters.outputOptions = { mimeType: `image/${body.output_format}` };
    const compression = numberField(body.output_compression);
    if (body.output_format === "jpeg" && compression !== undefined)
      parameters.outputOptions.compressionQuality = compression;
  }
  return parameters;
}

export function toImagenRequest(route: RouteKind, body: Json): Json {
  if (route === "image_generations") {
    const parameters = commonParameters(body);
    const ratio =
      typeof body.aspect_ratio === "string" ? body.aspect_ratio : nearestAspectRatio(body.size, IMAGEN_RATIOS);
    if (ratio) parameters.aspectRatio = ratio;
    return { instances: [{ prompt: body.prompt }], parameters };
  }
  if (route !== "image_edits") {
    throw new UpstreamError(400, "Vertex AI Imagen has no variations; use /v1/images/edits with a prompt and a mask", {
      code: "unsupported_route",
      param: "model",
    });
  }
  const mask = body.mask as UploadedFile | undefined;
  if (!mask) {
    throw new UpstreamError(400, "Imagen edits need a mask (the area to change)", {
      param: "mask",
      code: "missing_required_parameter",
    });
  }
  const image = (Array.isArray(body.image) ? body.image[0] : body.image) as UploadedFile;
  return {
    instances: [
      {
        prompt: body.prompt,
        referenceImages: [
          {
            referenceType: "REFERENCE_TYPE_RAW",
            referenceId: 1,
            referenceImage: { bytesBase64Encoded: image.base64() },
          },
          {
            referenceType: "REFERENCE_TYPE_MASK",
            referenceId: 2,
            referenceImage: { bytesBase64Encoded: mask.base64() },
            maskImageConfig: { maskMode: "MASK_MODE_USER_PROVIDED" },
          },
        ],
      },
    ],
    parameters: { ...commonParameters(body), editMode: "EDIT_MODE_INPAINT_INSERTION" },
  };
}

export function fromImagenResponse(upstream: Json, ctx: TransformContext): Json {
  const predictions: Json[] = Array.isArray(upstream?.predictions) ? upstream.predictions : [];
  const images = predictions
    .map((prediction) => prediction?.bytesBase64Encoded)
    .filter((bytes): bytes is string => typeof bytes === "string" && bytes !== "");
  if (images.length === 0) {
    const reason = predictions.find((prediction) => typeof prediction?.raiFilteredReason === "string");
    throw contentPolicyError("Vertex AI", reason?.raiFilteredReason ?? "no image was returned");
  }
  return imagesAnswer(images, ctx.now);
}

/** `{base}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}` (index.ts). */
type ModelUrl = (ctx: TransformContext, publisher: string, method: string) => string;

function imagenRoute(route: RouteKind, modelUrl: ModelUrl): RouteAdapter {
  return {
    async buildRequest(body, ctx) {
      if (typeof ctx.model !== "string" || ctx.model === "")
        throw new UpstreamError(400, "Vertex AI needs the Imagen model (e.g. imagen-4.0-generate-001)", {
          param: "model",
        });
      const payload = toImagenRequest(route, body);
      const token = await vertexAccessToken(ctx);
      return {
        url: modelUrl(ctx, "google", "predict"),
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...ctx.target.forwardHeaders },
        body: JSON.stringify(payload),
      };
    },
    transformResponse: fromImagenResponse,
  };
}

/** The Imagen routes, given the adapter's model URL builder (passed in: index.ts imports this module). */
export function imagenRoutes(modelUrl: ModelUrl): Partial<Record<RouteKind, RouteAdapter>> {
  return {
    image_generations: imagenRoute("image_generations", modelUrl),
    image_edits: imagenRoute("image_edits", modelUrl),
  };
}
