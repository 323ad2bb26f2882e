import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import { modelName } from "./common.ts";

/**
 * POST /v1/ocr (spec 4.1; Mistral's OCR API, https://docs.mistral.ai/api/#tag/ocr): a document or an image by
 * URL (https or a base64 data URL) or by uploaded file id, optionally a page selection.
 */
const url = z.string().check(z.minLength(1), z.maxLength(60_000_000));

export const ocrRequest = z.looseObject({
  model: modelName,
  document: z.union([
    z.looseObject({ type: z.literal("document_url"), document_url: url, document_name: z.optional(z.string()) }),
    z.looseObject({ type: z.literal("image_url"), image_url: z.union([url, z.looseObject({ url })]) }),
    z.looseObject({ type: z.literal("file"), file_id: z.string().check(z.minLength(1)) }),
  ]),
  pages: z.optional(z.array(int(z.minimum(0))).check(z.maxLength(10_000))),
  include_image_base64: z.optional(z.boolean()),
  image_limit: z.optional(int(z.minimum(0))),
  image_min_size: z.optional(int(z.minimum(0))),
});
