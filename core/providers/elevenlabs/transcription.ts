import { type Transcript, segmentsFromTokens } from "../audio/transcript.ts";
import { UpstreamError } from "../types.ts";

/**
 * ElevenLabs speech-to-text (https://elevenlabs.io/docs/api-reference/speech-to-text/convert): a multipart form
 * with `model_id` and `file`; the answer is `{language_code, language_probability, text, words}` where `words`
 * lists timed tokens of type `word`, `spacing` or `audio_event`.
 */
export function transcriptionForm(body: Record<string, any>): Record<string, unknown> {
  return {
    model_id: body.model,
    file: body.file,
    ...(typeof body.language === "string" && body.language ? { language_code: body.language } : {}),
    timestamps_granularity: "word",
  };
}

export function transcriptOfSpeechToText(upstream: any): Transcript {
  if (typeof upstream?.text !== "string") {
    throw new UpstreamError(502, "ElevenLabs answered without a transcript.", { code: "invalid_upstream_response" });
  }
  const tokens: any[] = Array.isArray(upstream.words) ? upstream.words : [];
  const timed = tokens
    .filter(
      (token) => typeof token?.text === "string" && typeof token.start === "number" && typeof token.end === "number",
    )
    .map((token) => ({
      text: token.text as string,
      start: token.start as number,
      end: token.end as number,
      word: token.type === "word",
    }));
  return {
    text: upstream.text,
    language: typeof upstream.language_code === "string" ? upstream.language_code : undefined,
    // The answer has no duration: per-second pricing reads the file's own (core/inference/gateway/audio-duration.ts).
    segments: segmentsFromTokens(timed),
    words: timed
      .filter((token) => token.word)
      .map((token) => ({ word: token.text, start: token.start, end: token.end })),
  };
}
