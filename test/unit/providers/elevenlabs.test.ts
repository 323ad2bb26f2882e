import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";
import { elevenLabsAdapter, mapElevenLabsError } from "../../../core/providers/elevenlabs/index.ts";
import type { RouteKind, TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";
import type { TextAnswer } from "../../../core/providers/types.ts";

/**
 * Fixtures follow https://elevenlabs.io/docs/api-reference/speech-to-text/convert (answer with word, spacing
 * tokens) and the API's error bodies (`detail`).
 */
const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../fixtures/elevenlabs/${name}`, import.meta.url), "utf8"));

const audio = new UploadedFile("hello.mp3", "audio/mpeg", new Uint8Array([73, 68, 51, 4, 0]));

function ctx(route: RouteKind): TransformContext {
  return {
    route,
    stream: false,
    model: "scribe_v1",
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
    target: { provider: "elevenlabs", apiKey: "xi-secret" },
  };
}

async function build(route: RouteKind, body: Record<string, any>, context = ctx(route)): Promise<UpstreamRequest> {
  return elevenLabsAdapter.routes[route]!.buildRequest(body, context);
}

describe("ElevenLabs speech", () => {
  it("posts {text, model_id} to /v1/text-to-speech/{voice} with the output format and xi-api-key", async () => {
    const request = await build("speech", {
      model: "eleven_multilingual_v2",
      input: "Hello",
      voice: "JBFqnCBsd6RMkjVDRZzb",
      speed: 1.1,
    });
    expect(request.url).toBe(
      "https://api.elevenlabs.io/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128",
    );
    expect(request.headers).toMatchObject({ "xi-api-key": "xi-secret", "content-type": "application/json" });
    expect(request.headers.authorization).toBeUndefined();
    expect(JSON.parse(String(request.body))).toEqual({
      text: "Hello",
      model_id: "eleven_multilingual_v2",
      voice_settings: { speed: 1.1 },
    });
    expect(elevenLabsAdapter.routes.speech!.rawAnswer?.({}, ctx("speech"))).toBe(true);
  });

  it("maps pcm, wav and opus, takes a voice object's id, refuses aac naming response_format", async () => {
    const pcm = await build("speech", {
      model: "eleven_flash_v2_5",
      input: "x",
      voice: { id: "v/1" },
      response_format: "pcm",
    });
    expect(pcm.url).toBe("https://api.elevenlabs.io/v1/text-to-speech/v%2F1?output_format=pcm_24000");
    const wav = await build("speech", { model: "m", input: "x", voice: "v", response_format: "wav" });
    expect(new URL(wav.url).searchParams.get("output_format")).toBe("wav_24000");
    const opus = await build("speech", { model: "m", input: "x", voice: "v", response_format: "opus" });
    expect(new URL(opus.url).searchParams.get("output_format")).toBe("opus_48000_128");
    await expect(build("speech", { model: "m", input: "x", voice: "v", response_format: "aac" })).rejects.toMatchObject(
      {
        status: 400,
        param: "response_format",
      },
    );
  });
});

describe("ElevenLabs transcriptions", () => {
  it("sends a multipart form with model_id, file and language_code", async () => {
    const request = await build("transcriptions", {
      model: "scribe_v1",
      file: audio,
      language: "en",
      prompt: "ignored",
    });
    expect(request.url).toBe("https://api.elevenlabs.io/v1/speech-to-text");
    expect(request.headers["xi-api-key"]).toBe("xi-secret");
    const form = await new Response(request.body as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": request.headers["content-type"]! },
    }).formData();
    expect(form.get("model_id")).toBe("scribe_v1");
    expect(form.get("language_code")).toBe("en");
    expect(form.get("timestamps_granularity")).toBe("word");
    expect(form.has("prompt")).toBe(false);
    const file = form.get("file") as File;
    expect(file.name).toBe("hello.mp3");
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(audio.bytes);
  });

  it("answers every response_format from the words", async () => {
    const route = elevenLabsAdapter.routes.transcriptions!;
    const answer = async (response_format?: string, extra: Record<string, unknown> = {}) => {
      const context = ctx("transcriptions");
      await route.buildRequest({ model: "scribe_v1", file: audio, response_format, ...extra }, context);
      return route.transformResponse(fixture("speech-to-text.json"), context);
    };
    // No duration in ElevenLabs' answer: json has no usage (the file's own length is metered).
    expect(await answer()).toEqual({ text: "Hello world. Bye now." });
    expect(((await answer("text")) as TextAnswer).text).toBe("Hello world. Bye now.\n");
    expect(((await answer("srt")) as TextAnswer).text).toBe(
      "1\n00:00:00,100 --> 00:00:01,000\nHello world.\n\n2\n00:00:01,600 --> 00:00:02,300\nBye now.\n\n",
    );
    expect(((await answer("vtt")) as TextAnswer).text).toBe(
      "WEBVTT\n\n00:00:00.100 --> 00:00:01.000\nHello world.\n\n00:00:01.600 --> 00:00:02.300\nBye now.\n\n",
    );
    const verbose = (await answer("verbose_json", { timestamp_granularities: ["word", "segment"] })) as any;
    expect(verbose).toMatchObject({ task: "transcribe", language: "en", duration: 2.3, text: "Hello world. Bye now." });
    expect(verbose.segments).toHaveLength(2);
    expect(verbose.words).toEqual([
      { word: "Hello", start: 0.1, end: 0.5 },
      { word: "world.", start: 0.55, end: 1 },
      { word: "Bye", start: 1.6, end: 1.9 },
      { word: "now.", start: 1.95, end: 2.3 },
    ]);
  });

  it("has no translations route", () => {
    expect(elevenLabsAdapter.routes.translations).toBeUndefined();
  });

  it("maps ElevenLabs' error bodies", () => {
    expect(mapElevenLabsError(401, JSON.stringify(fixture("error-invalid-key.json")))).toEqual({
      message: "Invalid API key",
      type: "authentication_error",
      code: "invalid_api_key",
      param: null,
    });
    expect(mapElevenLabsError(422, JSON.stringify(fixture("error-validation.json")))).toMatchObject({
      message: "body.model_id: field required",
      type: "invalid_request_error",
      code: "value_error.missing",
    });
  });
});
