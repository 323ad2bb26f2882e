import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import { modelName, user } from "./common.ts";
import { formBoolean, formFile, formInt, oneOrMany } from "./form-fields.ts";

/**
 * OpenAI's Images API (spec 1; https://platform.openai.com/docs/api-reference/images): generations as JSON,
 * edits and variations as multipart forms. `model` is optional, as on OpenAI (whose default is dall-e-2); the
 * other fields are checked where OpenAI documents a range and passed on otherwise, so newer models' options
 * reach the provider.
 */

const prompt = z.string().check(z.minLength(1), z.maxLength(32_000));
const responseFormat = z.enum(["url", "b64_json"]);
const size = z.string().check(z.regex(/^(auto|\d{2,5}x\d{2,5})$/, "expected 'auto' or WIDTHxHEIGHT"));

export const imageGenerationRequest = z.looseObject({
  prompt,
  model: z.optional(modelName),
  n: z.optional(int(z.minimum(1), z.maximum(10))),
  size: z.optional(size),
  quality: z.optional(z.string().check(z.maxLength(32))),
  style: z.optional(z.string().check(z.maxLength(32))),
  response_format: z.optional(responseFormat),
  output_format: z.optional(z.enum(["png", "jpeg", "webp"])),
  output_compression: z.optional(int(z.minimum(0), z.maximum(100))),
  background: z.optional(z.enum(["transparent", "opaque", "auto"])),
  moderation: z.optional(z.enum(["low", "auto"])),
  stream: z.optional(z.boolean()),
  partial_images: z.optional(int(z.minimum(0), z.maximum(3))),
  user: z.optional(user),
});

export const imageEditRequest = z.looseObject({
  image: oneOrMany(formFile, 16),
  prompt,
  mask: z.optional(formFile),
  model: z.optional(modelName),
  n: z.optional(formInt(1, 10)),
  size: z.optional(size),
  quality: z.optional(z.string().check(z.maxLength(32))),
  response_format: z.optional(responseFormat),
  output_format: z.optional(z.enum(["png", "jpeg", "webp"])),
  output_compression: z.optional(formInt(0, 100)),
  background: z.optional(z.enum(["transparent", "opaque", "auto"])),
  input_fidelity: z.optional(z.enum(["high", "low"])),
  stream: z.optional(formBoolean),
  partial_images: z.optional(formInt(0, 3)),
  user: z.optional(user),
});

export const imageVariationRequest = z.looseObject({
  image: formFile,
  model: z.optional(modelName),
  n: z.optional(formInt(1, 10)),
  size: z.optional(size),
  response_format: z.optional(responseFormat),
  user: z.optional(user),
});
