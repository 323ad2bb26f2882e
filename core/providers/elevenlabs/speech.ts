import { UpstreamError } from "../types.ts";

/**
 * ElevenLabs text-to-speech (https://elevenlabs.io/docs/api-reference/text-to-speech/convert):
 * `POST /v1/text-to-speech/{voice_id}?output_format=...` with `{text, model_id, voice_settings}`; the answer is
 * the audio. OpenAI's `voice` is the voice id, `response_format` an output format, `speed` a voice setting.
 */
const OUTPUT_FORMATS: Record<string, string> = {
  mp3: "mp3_44100_128",
  opus: "opus_48000_128",
  wav: "wav_24000",
  // OpenAI's pcm is raw 24 kHz 16-bit little-endian samples, as is ElevenLabs' pcm_24000.
  pcm: "pcm_24000",
};

export function outputFormatOf(body: Record<string, any>): string {
  const format = OUTPUT_FORMATS[body.response_format ?? "mp3"];
  if (!format) {
    throw new UpstreamError(400, `response_format '${body.response_format}' is not available with ElevenLabs.`, {
      code: "unsupported_value",
      param: "response_format",
    });
  }
  return format;
}

export function voiceIdOf(body: Record<string, any>): string {
  return typeof body.voice === "string" ? body.voice : String(body.voice?.id ?? "");
}

export function speechPath(body: Record<string, any>): string {
  return `/text-to-speech/${encodeURIComponent(voiceIdOf(body))}?output_format=${outputFormatOf(body)}`;
}

export function speechBody(body: Record<string, any>): string {
  return JSON.stringify({
    text: body.input,
    model_id: body.model,
    ...(typeof body.speed === "number" ? { voice_settings: { speed: body.speed } } : {}),
  });
}
