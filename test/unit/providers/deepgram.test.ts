import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";
import { deepgramAdapter, mapDeepgramError } from "../../../core/providers/deepgram/index.ts";
import { transcriptOfListen } from "../../../core/providers/deepgram/listen.ts";
import type { RouteKind, TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";
import { type TextAnswer, UpstreamError } from "../../../core/providers/types.ts";

/** Fixtures follow https://developers.deepgram.com/reference/speech-to-text-api/listen (utterances, paragraphs). */
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/deepgram/${name}`, import.meta.url), "utf8"));

const audio = new UploadedFile("hello.wav", "audio/wav", new Uint8Array([82, 73, 70, 70, 1, 2, 3, 4]));

function ctx(route: RouteKind, customHost?: string): TransformContext {
  return {
    route,
    stream: false,
    model: "nova-3",
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
    target: { provider: "deepgram", apiKey: "dg-secret", customHost },
  };
}

async function build(route: RouteKind, body: Record<string, any>, context = ctx(route)): Promise<UpstreamRequest> {
  return deepgramAdapter.routes[route]!.buildRequest(body, context);
}

describe("Deepgram transcriptions", () => {
  it("sends the raw audio with its type, the key as a Token, options in the query", async () => {
    const request = await build("transcriptions", {
      model: "nova-3",
      file: audio,
      language: "fr",
      response_format: "srt",
    });
    const url = new URL(request.url);
    expect(`${url.origin}${url.pathname}`).toBe("https://api.deepgram.com/v1/listen");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      model: "nova-3",
      smart_format: "true",
      language: "fr",
      utterances: "true",
    });
    expect(request.headers).toMatchObject({ authorization: "Token dg-secret", "content-type": "audio/wav" });
    expect(request.body).toBe(audio.bytes);
  });

  it("asks for language detection only for verbose_json without a language, and no utterances for json", async () => {
    const verbose = new URL(
      (await build("transcriptions", { model: "nova-3", file: audio, response_format: "verbose_json" })).url,
    );
    expect(verbose.searchParams.get("detect_language")).toBe("true");
    const json = new URL((await build("transcriptions", { model: "nova-2", file: audio })).url);
    expect(json.searchParams.get("model")).toBe("nova-2");
    expect(json.searchParams.has("utterances")).toBe(false);
    expect(json.searchParams.has("detect_language")).toBe(false);
  });

  it("uses a custom host in place of https://api.deepgram.com/v1", async () => {
    const request = await build(
      "transcriptions",
      { model: "nova-3", file: audio },
      ctx("transcriptions", "http://127.0.0.1:9/v1"),
    );
    expect(request.url.startsWith("http://127.0.0.1:9/v1/listen?")).toBe(true);
  });

  it("refuses diarized_json before calling Deepgram", async () => {
    await expect(
      build("transcriptions", { model: "nova-3", file: audio, response_format: "diarized_json" }),
    ).rejects.toMatchObject({
      status: 400,
      param: "response_format",
    });
  });

  it("turns utterances into segments and punctuated words into words", () => {
    const transcript = transcriptOfListen(fixture("listen-utterances.json"));
    expect(transcript).toMatchObject({ text: "Hello there. How are you today?", language: "en", duration: 4.5 });
    expect(transcript.segments).toEqual([
      { start: 0.08, end: 0.96, text: "Hello there." },
      { start: 2, end: 3.2, text: "How are you today?" },
    ]);
    expect(transcript.words[1]).toEqual({ word: "there.", start: 0.48, end: 0.96 });
  });

  it("falls back to paragraph sentences", () => {
    expect(transcriptOfListen(fixture("listen-paragraphs.json")).segments).toEqual([
      { start: 0.1, end: 0.9, text: "Good morning." },
      { start: 1.5, end: 2.3, text: "See you soon." },
    ]);
  });

  it("answers in each response_format through the route's transform, and meters metadata.duration", async () => {
    const route = deepgramAdapter.routes.transcriptions!;
    const answer = async (response_format?: string) => {
      const context = ctx("transcriptions");
      await route.buildRequest({ model: "nova-3", file: audio, response_format }, context);
      return route.transformResponse(fixture("listen-utterances.json"), context);
    };
    expect(await answer()).toEqual({
      text: "Hello there. How are you today?",
      usage: { type: "duration", seconds: 5 },
    });
    expect(((await answer("srt")) as TextAnswer).text).toBe(
      "1\n00:00:00,080 --> 00:00:00,960\nHello there.\n\n2\n00:00:02,000 --> 00:00:03,200\nHow are you today?\n\n",
    );
    expect(((await answer("vtt")) as TextAnswer).text).toMatch(
      /^WEBVTT\n\n00:00:00\.080 --> 00:00:00\.960\nHello there\./,
    );
    expect(((await answer("text")) as TextAnswer).text).toBe("Hello there. How are you today?\n");
    expect(await answer("verbose_json")).toMatchObject({ task: "transcribe", language: "en", duration: 4.5 });
    expect(route.usageOf?.(fixture("listen-utterances.json"), {}, ctx("transcriptions"))).toEqual({
      units: { seconds: 4.5 },
    });
  });

  it("reports an answer without a transcript as a bad upstream answer", () => {
    expect(() => transcriptOfListen({ results: { channels: [] } })).toThrow(UpstreamError);
  });

  it("maps Deepgram's error bodies", () => {
    expect(mapDeepgramError(401, JSON.stringify(fixture("error-auth.json")))).toMatchObject({
      message: "Invalid credentials.",
      code: "INVALID_AUTH",
      type: "authentication_error",
    });
    expect(
      mapDeepgramError(
        400,
        JSON.stringify({ category: "INVALID_QUERY_PARAMETER", message: "bad encoding", details: "x" }),
      ),
    ).toMatchObject({ message: "bad encoding", code: "INVALID_QUERY_PARAMETER", type: "invalid_request_error" });
  });
});

describe("Deepgram speech", () => {
  it("posts {text} to /v1/speak with the model and the encoding of response_format", async () => {
    const request = await build("speech", {
      model: "aura-2-thalia-en",
      input: "Hi there",
      voice: "alloy",
      response_format: "wav",
    });
    const url = new URL(request.url);
    expect(url.pathname).toBe("/v1/speak");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      model: "aura-2-thalia-en",
      encoding: "linear16",
      container: "wav",
    });
    expect(JSON.parse(String(request.body))).toEqual({ text: "Hi there" });
    expect(request.headers).toMatchObject({ authorization: "Token dg-secret", "content-type": "application/json" });
    expect(deepgramAdapter.routes.speech!.rawAnswer?.({}, ctx("speech"))).toBe(true);
  });

  it("maps mp3 by default and pcm to raw 24 kHz linear16", async () => {
    const mp3 = new URL((await build("speech", { model: "aura-2-thalia-en", input: "x", voice: "a" })).url);
    expect(mp3.searchParams.get("encoding")).toBe("mp3");
    const pcm = new URL(
      (await build("speech", { model: "aura-2-thalia-en", input: "x", voice: "a", response_format: "pcm" })).url,
    );
    expect(Object.fromEntries(pcm.searchParams)).toMatchObject({
      encoding: "linear16",
      container: "none",
      sample_rate: "24000",
    });
  });

  it("has no translations route (Deepgram does not translate)", () => {
    expect(deepgramAdapter.routes.translations).toBeUndefined();
  });

  it("passes through with the Token header", async () => {
    const endpoint = await deepgramAdapter.passthrough!({ provider: "deepgram", apiKey: "dg-secret" }, {});
    expect(endpoint).toEqual({ baseUrl: "https://api.deepgram.com/v1", headers: { authorization: "Token dg-secret" } });
  });
});
