import * as z from "zod/mini";
import { modelName } from "./common.ts";

/**
 * POST /v1/moderations (spec 4.1, 2.10): `input` a string, a list of strings, or OpenAI's multimodal list of
 * text and image_url parts; `model` defaults to `text-moderation-latest` (spec 4.1), which OpenAI upgrades over time.
 */
const multimodalPart = z.union([
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("image_url"), image_url: z.looseObject({ url: z.string() }) }),
]);

export const moderationRequest = z.looseObject({
  input: z.union([
    z.string(),
    z.array(z.string()).check(z.minLength(1), z.maxLength(32)),
    z.array(multimodalPart).check(z.minLength(1), z.maxLength(32)),
  ]),
  model: z._default(modelName, "text-moderation-latest"),
});
