import { type Transcript, type TranscriptSegment, segmentsFromTokens } from "../audio/transcript.ts";
import { isUploadedFile } from "../uploaded-file.ts";
import { UpstreamError } from "../types.ts";

/**
 * Deepgram's pre-recorded speech-to-text (https://developers.deepgram.com/reference/speech-to-text-api/listen):
 * the audio bytes are the body, options are query parameters, and the answer is
 * `{metadata: {duration, ...}, results: {channels: [{alternatives: [{transcript, words, paragraphs}]}], utterances}}`.
 */

/** Formats with timed segments: Deepgram is asked for utterances (https://developers.deepgram.com/docs/utterances). */
const TIMED_FORMATS = new Set(["verbose_json", "srt", "vtt"]);

/** The `/v1/listen` query for an OpenAI transcription body. */
export function listenQuery(body: Record<string, any>): URLSearchParams {
  const query = new URLSearchParams({ model: String(body.model) });
  // OpenAI's transcripts are punctuated and formatted; Deepgram's smart formatting does that.
  query.set("smart_format", "true");
  if (typeof body.language === "string" && body.language) query.set("language", body.language);
  const format = body.response_format ?? "json";
  if (TIMED_FORMATS.has(format)) query.set("utterances", "true");
  // verbose_json names the language: without one given, Deepgram is asked to detect it.
  if (format === "verbose_json" && !body.language) query.set("detect_language", "true");
  return query;
}

/** The audio file of the form, sent as the raw body with its own content type. */
export function listenBody(body: Record<string, any>): { bytes: Uint8Array; contentType: string } {
  const file = body.file;
  if (!isUploadedFile(file)) throw new UpstreamError(400, "An audio file is required.", { param: "file" });
  return { bytes: file.bytes, contentType: file.contentType };
}

/** Deepgram's answer as one transcript (first channel, best alternative). */
export function transcriptOfListen(upstream: any): Transcript {
  const channel = upstream?.results?.channels?.[0];
  const alternative = channel?.alternatives?.[0];
  if (!alternative || typeof alternative.transcript !== "string") {
    throw new UpstreamError(502, "Deepgram answered without a transcript.", { code: "invalid_upstream_response" });
  }
  const rawWords: any[] = Array.isArray(alternative.words) ? alternative.words : [];
  const words = rawWords
    .filter((word) => typeof word?.start === "number" && typeof word?.end === "number")
    .map((word) => ({ word: String(word.punctuated_word ?? word.word ?? ""), start: word.start, end: word.end }));
  const duration = upstream?.metadata?.duration;
  return {
    text: alternative.transcript,
    language: typeof channel.detected_language === "string" ? channel.detected_language : undefined,
    duration: typeof duration === "number" && Number.isFinite(duration) ? duration : undefined,
    segments: segmentsOfListen(upstream, alternative, words),
    words,
  };
}

/** Utterances when asked for, else paragraph sentences, else sentences cut from the words. */
function segmentsOfListen(
  upstream: any,
  alternative: any,
  words: Array<{ word: string; start: number; end: number }>,
): TranscriptSegment[] {
  const utterances: any[] = Array.isArray(upstream?.results?.utterances) ? upstream.results.utterances : [];
  const fromUtterances = utterances
    .filter((utterance) => (utterance.channel ?? 0) === 0 && typeof utterance.transcript === "string")
    .map((utterance) => ({ start: utterance.start, end: utterance.end, text: utterance.transcript }));
  if (fromUtterances.length > 0) return fromUtterances;
  const paragraphs: any[] = alternative.paragraphs?.paragraphs ?? [];
  const sentences = paragraphs.flatMap((paragraph) => (Array.isArray(paragraph.sentences) ? paragraph.sentences : []));
  if (sentences.length > 0)
    return sentences.map((sentence) => ({ start: sentence.start, end: sentence.end, text: sentence.text }));
  return segmentsFromTokens(
    words.map((word, index) => ({ ...word, text: `${index ? " " : ""}${word.word}`, word: true })),
  );
}

/** Seconds of audio Deepgram transcribed (`metadata.duration`), for per-second pricing. */
export function listenSeconds(upstream: any): number | undefined {
  const duration = upstream?.metadata?.duration;
  return typeof duration === "number" && Number.isFinite(duration) && duration >= 0 ? duration : undefined;
}
