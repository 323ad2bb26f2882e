import { UpstreamError } from "../types.ts";

/**
 * Deepgram's text-to-speech (https://developers.deepgram.com/reference/text-to-speech-api/speak): `{text}` in,
 * audio out. The model names the voice (`aura-2-thalia-en`); OpenAI's `response_format` picks the encoding and
 * container (https://developers.deepgram.com/docs/tts-media-output-settings).
 */
const ENCODINGS: Record<string, Record<string, string>> = {
  mp3: { encoding: "mp3" },
  opus: { encoding: "opus" },
  aac: { encoding: "aac" },
  flac: { encoding: "flac" },
  wav: { encoding: "linear16", container: "wav" },
  // OpenAI's pcm is raw 24 kHz 16-bit little-endian samples.
  pcm: { encoding: "linear16", container: "none", sample_rate: "24000" },
};

export function speakQuery(body: Record<string, any>): URLSearchParams {
  const encoding = ENCODINGS[body.response_format ?? "mp3"];
  if (!encoding) {
    throw new UpstreamError(400, `response_format '${body.response_format}' is not available with Deepgram.`, {
      code: "unsupported_value",
      param: "response_format",
    });
  }
  return new URLSearchParams({ model: String(body.model), ...encoding });
}

export function speakBody(body: Record<string, any>): string {
  return JSON.stringify({ text: body.input });
}
