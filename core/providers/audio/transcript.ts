import { TextAnswer, UpstreamError } from "../types.ts";

/**
 * OpenAI's transcription answers (https://platform.openai.com/docs/api-reference/audio/json-object and
 * verbose-json-object) made from a provider's own transcript (Deepgram, ElevenLabs): `json`, `verbose_json`,
 * and the text formats `text`, `srt` and `vtt`, whose subtitles are rendered here from the segment timings.
 */

export interface TranscriptWord {
  word: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
}

export interface TranscriptSegment {
  start: number;
  end: number;
  text: string;
}

/** What a provider's answer says, in one shape. */
export interface Transcript {
  text: string;
  language?: string;
  /** Seconds of input audio, when the provider reports it. */
  duration?: number;
  segments: TranscriptSegment[];
  words: TranscriptWord[];
}

/** The formats this module writes (OpenAI's `diarized_json` needs speakers no provider maps to it yet). */
const FORMATS = new Set(["json", "text", "srt", "verbose_json", "vtt"]);

/** Refuses, before any upstream call, a `response_format` a provider's transcript cannot be made into. */
export function checkTranscriptFormat(body: Record<string, any>, provider: string): void {
  const format = body.response_format ?? "json";
  if (!FORMATS.has(format)) {
    throw new UpstreamError(400, `response_format '${format}' is not available with provider ${provider}.`, {
      code: "unsupported_value",
      param: "response_format",
    });
  }
}

/** The client's answer in the `response_format` it asked for (json by default). */
export function transcriptAnswer(
  transcript: Transcript,
  body: Record<string, any>,
  task: "transcribe" | "translate" = "transcribe",
): object {
  const format = body.response_format ?? "json";
  const usage =
    transcript.duration === undefined ? {} : { usage: { type: "duration", seconds: Math.ceil(transcript.duration) } };
  switch (format) {
    case "text":
      return new TextAnswer(`${transcript.text}\n`, "text/plain; charset=utf-8");
    case "srt":
      return new TextAnswer(renderSrt(transcript.segments), "text/plain; charset=utf-8");
    case "vtt":
      return new TextAnswer(renderVtt(transcript.segments), "text/plain; charset=utf-8");
    case "verbose_json": {
      const granularities: string[] = body.timestamp_granularities ?? ["segment"];
      const wordsOnly = granularities.length > 0 && !granularities.includes("segment");
      return {
        task,
        language: transcript.language ?? "",
        duration: transcript.duration ?? transcript.segments.at(-1)?.end ?? 0,
        text: transcript.text,
        ...(wordsOnly ? {} : { segments: transcript.segments.map(verboseSegment) }),
        ...(granularities.includes("word") ? { words: transcript.words } : {}),
        ...usage,
      };
    }
    default:
      return { text: transcript.text, ...usage };
  }
}

/** A segment as Whisper's verbose_json lists it; the decoder statistics a provider does not have are zero. */
function verboseSegment(segment: TranscriptSegment, id: number) {
  return {
    id,
    seek: 0,
    start: segment.start,
    end: segment.end,
    text: segment.text,
    tokens: [],
    temperature: 0,
    avg_logprob: 0,
    compression_ratio: 0,
    no_speech_prob: 0,
  };
}

/** SubRip: numbered cues, `HH:MM:SS,mmm` times, a blank line after each cue. */
export function renderSrt(segments: readonly TranscriptSegment[]): string {
  return segments
    .map(
      (segment, index) =>
        `${index + 1}\n${timestamp(segment.start, ",")} --> ${timestamp(segment.end, ",")}\n${cueText(segment.text)}\n\n`,
    )
    .join("");
}

/** WebVTT: the `WEBVTT` header, then cues with `HH:MM:SS.mmm` times. */
export function renderVtt(segments: readonly TranscriptSegment[]): string {
  const cues = segments.map(
    (segment) => `${timestamp(segment.start, ".")} --> ${timestamp(segment.end, ".")}\n${cueText(segment.text)}\n\n`,
  );
  return `WEBVTT\n\n${cues.join("")}`;
}

function timestamp(seconds: number, separator: "," | "."): string {
  const totalMs = Math.max(0, Math.round(seconds * 1000));
  const ms = totalMs % 1000;
  const totalSeconds = Math.floor(totalMs / 1000);
  const pad = (value: number, width = 2) => String(value).padStart(width, "0");
  return `${pad(Math.floor(totalSeconds / 3600))}:${pad(Math.floor(totalSeconds / 60) % 60)}:${pad(totalSeconds % 60)}${separator}${pad(ms, 3)}`;
}

/** A blank line ends a cue in both formats: a cue's own text must not contain one. */
function cueText(text: string): string {
  return text.trim().replace(/\n\s*\n+/g, "\n") || " ";
}

/** Sentence ends (Latin, CJK) close a segment when a provider gives only words. */
const SENTENCE_END = /[.!?…。！？]["')\]]*$/;
/** A pause this long (seconds) between words also closes a segment. */
const SEGMENT_PAUSE = 1;

/**
 * Segments made from timed tokens when the provider gives none: a segment ends after a sentence-ending word or
 * before a long pause. `text` of a token is what it adds to the transcript (spacing tokens included), `word`
 * marks the tokens that are spoken words (their times count).
 */
export function segmentsFromTokens(
  tokens: ReadonlyArray<{ text: string; start: number; end: number; word: boolean }>,
): TranscriptSegment[] {
  const segments: TranscriptSegment[] = [];
  let current: TranscriptSegment | undefined;
  let lastEnd = 0;
  const close = () => {
    const segment = current;
    current = undefined;
    if (segment?.text.trim()) segments.push({ ...segment, text: segment.text.trim() });
  };
  for (const token of tokens) {
    if (token.word && current && token.start - lastEnd >= SEGMENT_PAUSE) close();
    if (!current) {
      if (!token.word && !token.text.trim()) continue;
      current = { start: token.start, end: token.end, text: "" };
    }
    current.text += token.text;
    if (token.word || token.text.trim()) current.end = Math.max(current.end, token.end);
    if (token.word) {
      lastEnd = token.end;
      if (SENTENCE_END.test(token.text.trim())) close();
    }
  }
  close();
  return segments;
}
