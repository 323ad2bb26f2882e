import { contentPolicyError, imagesAnswer, requireSingleImage } from "../images/answer.ts";
import { type Dimensions, nearestAspectRatio, nearestDimensions, parseSize } from "../images/size.ts";
import {
  type MeteredUsage,
  type RouteAdapter,
  type RouteKind,
  type TransformContext,
  UpstreamError,
} from "../types.ts";
import type { UploadedFile } from "../uploaded-file.ts";
import { bedrockPost, bedrockUrl } from "./http.ts";

/**
 * OpenAI's Images API on Bedrock image models through InvokeModel (POST /model/{modelId}/invoke):
 *
 * - Amazon Titan Image Generator v1/v2 and Amazon Nova Canvas (one request format,
 *   https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-titan-image.html and
 *   .../nova/latest/userguide/image-gen-req-resp-structure.html): `taskType` TEXT_IMAGE (generations),
 *   INPAINTING (edits with a mask) or IMAGE_VARIATION (edits without one, variations), `imageGenerationConfig`
 *   {numberOfImages, width, height, quality, cfgScale, seed}; the answer is `{images: [base64...], error}`.
 * - Stability models on Bedrock (`stability.sd3-5-large-v1:0`, `stability.stable-image-ultra-v1:1`,
 *   `stability.stable-image-core-v1:1`; https://docs.aws.amazon.com/bedrock/latest/userguide/model-parameters-diffusion-3-5-large.html):
 *   `{prompt, mode, aspect_ratio, output_format, seed, negative_prompt}` (edits: image-to-image with `image`
 *   and `strength`); the answer is `{images, finish_reasons, seeds}`, one image per call.
 *
 * Every answer becomes `{created, data: [{b64_json}]}`: Bedrock returns no URLs.
 */

type Family = "titan" | "nova" | "stability";
type Json = Record<string, any>;

export function imageFamily(modelId: string): Family {
  if (/amazon\.titan-image-generator/.test(modelId)) return "titan";
  if (/amazon\.nova-canvas/.test(modelId)) return "nova";
  if (/stability\./.test(modelId)) return "stability";
  throw new UpstreamError(
    400,
    `Bedrock images support Amazon Titan Image Generator, Amazon Nova Canvas and Stability models, not ${modelId}`,
    { param: "model", code: "unsupported_model" },
  );
}

/** Titan's documented width x height pairs. */
const TITAN_SIZES: readonly Dimensions[] = [
  [1024, 1024],
  [768, 768],
  [512, 512],
  [768, 1152],
  [384, 576],
  [1152, 768],
  [576, 384],
  [768, 1280],
  [384, 640],
  [1280, 768],
  [640, 384],
  [896, 1152],
  [448, 576],
  [1152, 896],
  [576, 448],
  [768, 1408],
  [384, 704],
  [1408, 768],
  [704, 384],
  [640, 1408],
  [320, 704],
  [1408, 640],
  [704, 320],
  [1152, 640],
  [1173, 640],
].map(([width, height]) => ({ width: width!, height: height! }));

/** Aspect ratios the Stability models on Bedrock take. */
const STABILITY_RATIOS = ["16:9", "1:1", "21:9", "2:3", "3:2", "4:5", "5:4", "9:16", "9:21"] as const;

/** Nova Canvas takes any size in 320..4096 px, multiples of 16, at most 4,194,304 pixels and 4:1 either way. */
function novaDimensions(size: unknown): Dimensions | undefined {
  const parsed = parseSize(size);
  if (!parsed) return undefined;
  const fits = (value: number) => value >= 320 && value <= 4096 && value % 16 === 0;
  const ratio = parsed.width / parsed.height;
  if (
    fits(parsed.width) &&
    fits(parsed.height) &&
    parsed.width * parsed.height <= 4_194_304 &&
    ratio <= 4 &&
    ratio >= 0.25
  )
    return parsed;
  return nearestDimensions(size, TITAN_SIZES);
}

function dimensionsOf(family: Family, size: unknown): Dimensions | undefined {
  return family === "nova" ? novaDimensions(size) : nearestDimensions(size, TITAN_SIZES);
}

/** OpenAI qualities that ask for the best: `hd` (DALL-E 3), `high` (gpt-image); `premium` as Titan names it. */
function isPremium(quality: unknown): boolean {
  return quality === "hd" || quality === "high" || quality === "premium";
}

function numberField(value: unknown): number | undefined {
  const number = typeof value === "string" && value.trim() !== "" ? Number(value) : value;
  return typeof number === "number" && Number.isFinite(number) ? number : undefined;
}

function stringField(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function titanConfig(family: Family, body: Json): Json {
  const config: Json = { numberOfImages: numberField(body.n) ?? 1 };
  const dimensions = dimensionsOf(family, body.size);
  if (dimensions) Object.assign(config, dimensions);
  if (body.quality !== undefined) config.quality = isPremium(body.quality) ? "premium" : "standard";
  const cfgScale = numberField(body.cfg_scale);
  if (cfgScale !== undefined) config.cfgScale = cfgScale;
  const seed = numberField(body.seed);
  if (seed !== undefined) config.seed = seed;
  return config;
}

function firstImage(image: unknown): UploadedFile {
  return (Array.isArray(image) ? image[0] : image) as UploadedFile;
}

/** The Titan / Nova Canvas body for each route. */
export function toTitanImageRequest(route: RouteKind, body: Json, family: Family = "titan"): Json {
  const negativeText = stringField(body.negative_prompt);
  const imageGenerationConfig = titanConfig(family, body);
  if (route === "image_generations") {
    return {
      taskType: "TEXT_IMAGE",
      textToImageParams: { text: body.prompt, ...(negativeText && { negativeText }) },
      imageGenerationConfig,
    };
  }
  const images: UploadedFile[] = Array.isArray(body.image) ? body.image : [body.image];
  if (route === "image_edits" && body.mask) {
    return {
      taskType: "INPAINTING",
      inPaintingParams: {
        image: images[0]!.base64(),
        text: body.prompt,
        maskImage: (body.mask as UploadedFile).base64(),
        ...(negativeText && { negativeText }),
      },
      imageGenerationConfig,
    };
  }
  const similarityStrength = numberField(body.similarity_strength);
  return {
    taskType: "IMAGE_VARIATION",
    imageVariationParams: {
      images: images.slice(0, 5).map((image) => image.base64()),
      ...(stringField(body.prompt) && { text: body.prompt }),
      ...(negativeText && { negativeText }),
      ...(similarityStrength !== undefined && { similarityStrength }),
    },
    imageGenerationConfig,
  };
}

/** The Stability body for generations (text-to-image) and edits (image-to-image). */
export function toStabilityImageRequest(route: RouteKind, body: Json, modelId: string): Json {
  requireSingleImage(body, "Stability on Bedrock");
  const sd3 = /stability\.sd3/.test(modelId);
  const request: Json = { prompt: body.prompt };
  const negative = stringField(body.negative_prompt);
  if (negative) request.negative_prompt = negative;
  const seed = numberField(body.seed);
  if (seed !== undefined) request.seed = seed;
  request.output_format = body.output_format === "jpeg" || body.output_format === "webp" ? body.output_format : "png";
  if (route === "image_generations") {
    if (sd3) request.mode = "text-to-image";
    const ratio = stringField(body.aspect_ratio) ?? nearestAspectRatio(body.size, STABILITY_RATIOS);
    if (ratio) request.aspect_ratio = ratio;
    return request;
  }
  if (route === "image_variations") {
    throw new UpstreamError(400, "Stability models on Bedrock have no variations; use /v1/images/edits with a prompt", {
      code: "unsupported_route",
      param: "model",
    });
  }
  if (sd3) request.mode = "image-to-image";
  request.image = firstImage(body.image).base64();
  // Image-to-image needs a strength (0: keep the image, 1: ignore it); OpenAI has no such field.
  request.strength = numberField(body.strength) ?? 0.7;
  return request;
}

export function fromTitanImageResponse(upstream: Json, ctx: TransformContext): Json {
  if (typeof upstream?.error === "string" && upstream.error) throw contentPolicyError("Bedrock", upstream.error);
  const images = Array.isArray(upstream?.images) ? upstream.images.filter((x: unknown) => typeof x === "string") : [];
  return imagesAnswer(images, ctx.now);
}

export function fromStabilityImageResponse(upstream: Json, ctx: TransformContext): Json {
  const reasons: unknown[] = Array.isArray(upstream?.finish_reasons) ? upstream.finish_reasons : [];
  const filtered = reasons.find((reason) => typeof reason === "string" && reason !== "");
  if (filtered) throw contentPolicyError("Bedrock", String(filtered));
  const images = Array.isArray(upstream?.images) ? upstream.images.filter((x: unknown) => typeof x === "string") : [];
  return imagesAnswer(images, ctx.now);
}

/**
 * Images made, priced by resolution class and quality (Bedrock prices Titan per 512x512 or 1024x1024 class and
 * Nova Canvas per 1024x1024 or 2048x2048 class, standard or premium).
 */
export function bedrockImageUsage(upstream: unknown, body: Json, ctx: TransformContext): MeteredUsage {
  const family = imageFamily(ctx.model || body.model);
  const answer = upstream as Json | undefined;
  const images = Array.isArray(answer?.images) ? answer.images.length : (numberField(body.n) ?? 1);
  if (family === "stability") return { units: { images } };
  const dimensions = dimensionsOf(family, body.size) ?? { width: 1024, height: 1024 };
  const pixels = dimensions.width * dimensions.height;
  const size =
    family === "titan"
      ? pixels <= 512 * 512
        ? "512x512"
        : "1024x1024"
      : pixels <= 1024 * 1024
        ? "1024x1024"
        : "2048x2048";
  return { units: { images }, priceKey: { size, quality: isPremium(body.quality) ? "premium" : "standard" } };
}

function modelOf(body: Json, ctx: TransformContext): string {
  const model = ctx.model || body.model;
  if (typeof model !== "string" || !model) throw new UpstreamError(400, "model is required", { param: "model" });
  return model;
}

function imageRoute(route: RouteKind): RouteAdapter {
  return {
    buildRequest(body, ctx) {
      const modelId = modelOf(body, ctx);
      const family = imageFamily(modelId);
      const payload =
        family === "stability"
          ? toStabilityImageRequest(route, body, modelId)
          : toTitanImageRequest(route, body, family);
      return bedrockPost(ctx, bedrockUrl(ctx, modelId, "invoke"), payload);
    },
    transformResponse: (upstream, ctx) =>
      imageFamily(ctx.model) === "stability"
        ? fromStabilityImageResponse(upstream, ctx)
        : fromTitanImageResponse(upstream, ctx),
    usageOf: bedrockImageUsage,
  };
}

export const bedrockImageRoutes: Partial<Record<RouteKind, RouteAdapter>> = {
  image_generations: imageRoute("image_generations"),
  image_edits: imageRoute("image_edits"),
  image_variations: imageRoute("image_variations"),
};
