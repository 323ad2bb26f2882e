import { contentPolicyError, imagesAnswer, requireSingleImage } from "../images/answer.ts";
import { nearestAspectRatio } from "../images/size.ts";
import type { MeteredUsage, RouteKind, TransformContext } from "../types.ts";
import { UpstreamError } from "../types.ts";

/**
 * Stability AI's Stable Image API v2beta (https://platform.stability.ai/docs/api-reference):
 *   POST /v2beta/stable-image/generate/ultra | core | sd3   multipart form {prompt, negative_prompt, aspect_ratio,
 *        seed, output_format, style_preset, model (sd3 only: sd3.5-large, sd3.5-large-turbo, sd3.5-medium, ...)}
 *   POST /v2beta/stable-image/edit/inpaint                  multipart form {image, mask?, prompt, negative_prompt,
 *        seed, output_format, grow_mask}
 * With `Accept: application/json` the answer is `{image: base64, finish_reason: SUCCESS | CONTENT_FILTERED, seed}`:
 * one image per call, so `n` must be 1.
 */

type Json = Record<string, any>;

/** Aspect ratios the generate endpoints take. */
const STABILITY_RATIOS = ["16:9", "1:1", "21:9", "2:3", "3:2", "4:5", "5:4", "9:16", "9:21"] as const;

export interface StabilityEndpoint {
  /** Path after the base URL. */
  path: string;
  /** The form's `model` field (the sd3 endpoint serves several models). */
  model?: string;
}

/** Which endpoint serves a model: `stable-image-ultra`, `stable-image-core` (the default), `sd3*`. */
export function stabilityEndpoint(route: RouteKind, model: unknown): StabilityEndpoint {
  if (route === "image_edits") return { path: "/v2beta/stable-image/edit/inpaint" };
  const name = typeof model === "string" && model !== "" ? model : "stable-image-core";
  if (/^(stable-image-)?ultra$/.test(name)) return { path: "/v2beta/stable-image/generate/ultra" };
  if (/^(stable-image-)?core$/.test(name)) return { path: "/v2beta/stable-image/generate/core" };
  if (/^sd3(\.5)?(-[\w.-]+)?$/.test(name)) return { path: "/v2beta/stable-image/generate/sd3", model: name };
  throw new UpstreamError(
    400,
    `Stability AI has no image model '${name}' (stable-image-ultra, stable-image-core, sd3.5-large, sd3.5-large-turbo, sd3.5-medium, ...)`,
    { param: "model", code: "unsupported_model" },
  );
}

function copyText(form: Json, body: Json, name: string): void {
  const value = body[name];
  if (typeof value === "string" ? value !== "" : typeof value === "number") form[name] = value;
}

/** The multipart form (files as UploadedFile values; core/providers/form-body.ts encodes it). */
export function toStabilityForm(route: RouteKind, body: Json, endpoint: StabilityEndpoint): Json {
  requireSingleImage(body, "Stability AI");
  const form: Json = { prompt: body.prompt };
  if (endpoint.model) form.model = endpoint.model;
  for (const name of ["negative_prompt", "seed", "style_preset"]) copyText(form, body, name);
  form.output_format = body.output_format === "jpeg" || body.output_format === "webp" ? body.output_format : "png";
  if (route === "image_edits") {
    form.image = Array.isArray(body.image) ? body.image[0] : body.image;
    // Without a mask Stability inpaints the image's transparent pixels, as OpenAI edits do.
    if (body.mask) form.mask = body.mask;
    copyText(form, body, "grow_mask");
    return form;
  }
  const ratio =
    typeof body.aspect_ratio === "string" ? body.aspect_ratio : nearestAspectRatio(body.size, STABILITY_RATIOS);
  if (ratio) form.aspect_ratio = ratio;
  return form;
}

export function fromStabilityResponse(upstream: Json, ctx: TransformContext): Json {
  if (upstream?.finish_reason === "CONTENT_FILTERED") throw contentPolicyError("Stability AI", "content filtered");
  if (typeof upstream?.image !== "string" || upstream.image === "") {
    throw new UpstreamError(502, "Stability AI answered without an image", { code: "invalid_upstream_response" });
  }
  return imagesAnswer([upstream.image], ctx.now);
}

/** One image a call; inpainting is priced apart from the generate models (priceKey `inpaint`). */
export function stabilityUsage(_upstream: unknown, _body: Json, ctx: TransformContext): MeteredUsage {
  return { units: { images: 1 }, ...(ctx.route === "image_edits" && { priceKey: { quality: "inpaint" } }) };
}

/** Stability's errors are `{id, name, errors: [messages]}`. */
export function mapStabilityError(
  status: number,
  text: string,
): { message: string; type: string; code: string | null; param?: string | null } | undefined {
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed?.errors) || typeof parsed?.name !== "string") return undefined;
  const message = parsed.errors.filter((item: unknown) => typeof item === "string").join("; ") || parsed.name;
  const type =
    status === 401
      ? "authentication_error"
      : status === 403
        ? "permission_error"
        : status === 429
          ? "rate_limit_error"
          : status >= 500
            ? "server_error"
            : "invalid_request_error";
  return { message, type, code: parsed.name, param: null };
}
