import { describe, expect, it } from "vitest";
import {
  checkTranscriptFormat,
  renderSrt,
  renderVtt,
  segmentsFromTokens,
  type Transcript,
  transcriptAnswer,
} from "../../../core/providers/audio/transcript.ts";
import { TextAnswer, UpstreamError } from "../../../core/providers/types.ts";

const transcript: Transcript = {
  text: "Hello there. How are you?",
  language: "en",
  duration: 4.5,
  segments: [
    { start: 0.08, end: 0.96, text: "Hello there." },
    { start: 62.5, end: 3723.0045, text: "How are you?" },
  ],
  words: [{ word: "Hello", start: 0.08, end: 0.48 }],
};

describe("SRT and VTT rendering", () => {
  it("writes numbered SubRip cues with comma milliseconds and hour rollover", () => {
    expect(renderSrt(transcript.segments)).toBe(
      "1\n00:00:00,080 --> 00:00:00,960\nHello there.\n\n2\n00:01:02,500 --> 01:02:03,005\nHow are you?\n\n",
    );
  });

  it("writes a WEBVTT header and dotted milliseconds", () => {
    expect(renderVtt(transcript.segments)).toBe(
      "WEBVTT\n\n00:00:00.080 --> 00:00:00.960\nHello there.\n\n00:01:02.500 --> 01:02:03.005\nHow are you?\n\n",
    );
  });

  it("keeps a blank line inside a segment from ending its cue", () => {
    expect(renderSrt([{ start: 0, end: 1, text: "one\n\ntwo" }])).toBe(
      "1\n00:00:00,000 --> 00:00:01,000\none\ntwo\n\n",
    );
  });
});

describe("OpenAI transcription answers", () => {
  it("json: text and duration usage", () => {
    expect(transcriptAnswer(transcript, {})).toEqual({
      text: transcript.text,
      usage: { type: "duration", seconds: 5 },
    });
  });

  it("text, srt and vtt are text answers", () => {
    const text = transcriptAnswer(transcript, { response_format: "text" }) as TextAnswer;
    expect(text).toBeInstanceOf(TextAnswer);
    expect(text.text).toBe("Hello there. How are you?\n");
    expect((transcriptAnswer(transcript, { response_format: "srt" }) as TextAnswer).text).toMatch(/^1\n00:00:00,080/);
    expect((transcriptAnswer(transcript, { response_format: "vtt" }) as TextAnswer).text).toMatch(/^WEBVTT\n/);
  });

  it("verbose_json: Whisper's segment fields, words only when asked", () => {
    const verbose = transcriptAnswer(transcript, { response_format: "verbose_json" }, "translate") as any;
    expect(verbose).toMatchObject({ task: "translate", language: "en", duration: 4.5, text: transcript.text });
    expect(verbose.segments[1]).toEqual({
      id: 1,
      seek: 0,
      start: 62.5,
      end: 3723.0045,
      text: "How are you?",
      tokens: [],
      temperature: 0,
      avg_logprob: 0,
      compression_ratio: 0,
      no_speech_prob: 0,
    });
    expect(verbose.words).toBeUndefined();
    const words = transcriptAnswer(transcript, {
      response_format: "verbose_json",
      timestamp_granularities: ["word"],
    }) as any;
    expect(words.words).toEqual(transcript.words);
    expect(words.segments).toBeUndefined();
  });

  it("refuses diarized_json naming response_format", () => {
    let caught: unknown;
    try {
      checkTranscriptFormat({ response_format: "diarized_json" }, "deepgram");
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UpstreamError);
    expect(caught).toMatchObject({ status: 400, param: "response_format" });
    expect(() => checkTranscriptFormat({ response_format: "vtt" }, "deepgram")).not.toThrow();
  });
});

describe("segments from timed tokens", () => {
  it("cuts at sentence ends and at long pauses, spacing kept inside", () => {
    const segments = segmentsFromTokens([
      { text: "Hi", start: 0, end: 0.3, word: true },
      { text: " ", start: 0.3, end: 0.35, word: false },
      { text: "all.", start: 0.35, end: 0.7, word: true },
      { text: " ", start: 0.7, end: 0.8, word: false },
      { text: "So", start: 0.8, end: 1, word: true },
      { text: " ", start: 1, end: 2.5, word: false },
      { text: "then", start: 2.5, end: 2.9, word: true },
    ]);
    expect(segments).toEqual([
      { start: 0, end: 0.7, text: "Hi all." },
      { start: 0.8, end: 1, text: "So" },
      { start: 2.5, end: 2.9, text: "then" },
    ]);
  });
});
