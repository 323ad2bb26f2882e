import * as z from "zod/mini";
import { modelName } from "./common.ts";
import { formBoolean, formFile, formNumber } from "./form-fields.ts";

/**
 * OpenAI's Audio API (https://platform.openai.com/docs/api-reference/audio): speech as JSON (the answer is the
 * audio), transcriptions and translations as multipart forms with every `response_format`.
 */

export const speechRequest = z.looseObject({
  model: modelName,
  input: z.string().check(z.minLength(1), z.maxLength(4096)),
  voice: z.union([z.string().check(z.minLength(1), z.maxLength(256)), z.looseObject({ id: z.string() })]),
  instructions: z.optional(z.string().check(z.maxLength(4096))),
  response_format: z.optional(z.enum(["mp3", "opus", "aac", "flac", "wav", "pcm"])),
  speed: z.optional(z.number().check(z.minimum(0.25), z.maximum(4))),
  stream_format: z.optional(z.enum(["sse", "audio"])),
});

const transcriptFormat = z.enum(["json", "text", "srt", "verbose_json", "vtt", "diarized_json"]);

export const transcriptionRequest = z.looseObject({
  file: formFile,
  model: modelName,
  language: z.optional(z.string().check(z.maxLength(16))),
  prompt: z.optional(z.string().check(z.maxLength(8192))),
  response_format: z.optional(transcriptFormat),
  temperature: z.optional(formNumber(0, 1)),
  timestamp_granularities: z.optional(
    z.pipe(
      z.union([z.array(z.enum(["word", "segment"])), z.enum(["word", "segment"])]),
      z.transform((value) => (Array.isArray(value) ? value : [value])),
    ),
  ),
  stream: z.optional(formBoolean),
});

export const translationRequest = z.looseObject({
  file: formFile,
  model: modelName,
  prompt: z.optional(z.string().check(z.maxLength(8192))),
  response_format: z.optional(z.enum(["json", "text", "srt", "verbose_json", "vtt"])),
  temperature: z.optional(formNumber(0, 1)),
});
