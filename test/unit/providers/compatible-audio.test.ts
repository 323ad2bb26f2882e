import { describe, expect, it } from "vitest";
import { UploadedFile } from "../../../core/providers/uploaded-file.ts";
import { createCompatibleAdapter } from "../../../core/providers/openai/compatible.ts";
import { COMPATIBLE_PROVIDERS } from "../../../core/providers/openai/table.ts";
import type { TransformContext, UpstreamRequest } from "../../../core/providers/types.ts";
import { TextAnswer } from "../../../core/providers/types.ts";

/**
 * Groq's transcriptions answer json, text and verbose_json only (https://console.groq.com/docs/speech-to-text):
 * srt and vtt are asked as verbose_json and rendered by the gateway.
 */
const groq = createCompatibleAdapter(COMPATIBLE_PROVIDERS.find((row) => row.id === "groq")!);
const openai = createCompatibleAdapter(COMPATIBLE_PROVIDERS.find((row) => row.id === "openai")!);
const audio = new UploadedFile("a.m4a", "audio/mp4", new Uint8Array([0, 0, 0, 24]));

/** Groq's verbose_json (OpenAI's shape, with Groq's x_groq id). */
const verbose = {
  task: "transcribe",
  language: "English",
  duration: 3.1,
  text: " Hello. Bye.",
  segments: [
    {
      id: 0,
      seek: 0,
      start: 0,
      end: 1.2,
      text: " Hello.",
      tokens: [50365],
      temperature: 0,
      avg_logprob: -0.2,
      compression_ratio: 0.6,
      no_speech_prob: 0.01,
    },
    {
      id: 1,
      seek: 0,
      start: 1.2,
      end: 3.1,
      text: " Bye.",
      tokens: [50425],
      temperature: 0,
      avg_logprob: -0.3,
      compression_ratio: 0.6,
      no_speech_prob: 0.02,
    },
  ],
  x_groq: { id: "req_01" },
};

function ctx(): TransformContext {
  return {
    route: "transcriptions",
    stream: false,
    model: "whisper-large-v3-turbo",
    now: 1,
    requestId: "req-1",
    includeUsage: false,
    target: { provider: "groq", apiKey: "gsk-secret" },
  };
}

async function formOf(request: UpstreamRequest) {
  return new Response(request.body as Uint8Array<ArrayBuffer>, {
    headers: { "content-type": request.headers["content-type"]! },
  }).formData();
}

describe("Groq subtitles", () => {
  it("asks srt as verbose_json and renders it", async () => {
    const route = groq.routes.transcriptions!;
    const context = ctx();
    const body = { model: "whisper-large-v3-turbo", file: audio, response_format: "srt" };
    const request = await route.buildRequest(body, context);
    expect(request.url).toBe("https://api.groq.com/openai/v1/audio/transcriptions");
    expect((await formOf(request)).get("response_format")).toBe("verbose_json");
    expect(route.rawAnswer?.(body, context)).toBe(false);
    const answer = route.transformResponse(verbose, context) as TextAnswer;
    expect(answer).toBeInstanceOf(TextAnswer);
    expect(answer.text).toBe("1\n00:00:00,000 --> 00:00:01,200\nHello.\n\n2\n00:00:01,200 --> 00:00:03,100\nBye.\n\n");
    expect(route.usageOf?.(verbose, body, context)).toEqual({ units: { seconds: 3.1 } });
  });

  it("renders vtt for translations too, and leaves text and json to Groq", async () => {
    const route = groq.routes.translations!;
    const context = ctx();
    await route.buildRequest({ model: "whisper-large-v3", file: audio, response_format: "vtt" }, context);
    expect((route.transformResponse(verbose, context) as TextAnswer).text).toMatch(
      /^WEBVTT\n\n00:00:00\.000 --> 00:00:01\.200\nHello\.\n/,
    );
    const textBody = { model: "whisper-large-v3", file: audio, response_format: "text" };
    const textContext = ctx();
    const request = await route.buildRequest(textBody, textContext);
    expect((await formOf(request)).get("response_format")).toBe("text");
    expect(route.rawAnswer?.(textBody, textContext)).toBe(true);
    const jsonContext = ctx();
    await route.buildRequest({ model: "whisper-large-v3", file: audio }, jsonContext);
    expect(route.transformResponse({ text: "Hi" }, jsonContext)).toEqual({ text: "Hi" });
    expect(route.usageOf?.({ text: "Hi" }, { model: "whisper-large-v3" }, jsonContext)).toBeUndefined();
  });

  it("OpenAI's own srt stays relayed from OpenAI", async () => {
    const route = openai.routes.transcriptions!;
    const body = { model: "whisper-1", file: audio, response_format: "srt" };
    const request = await route.buildRequest(body, { ...ctx(), target: { provider: "openai", apiKey: "sk" } });
    expect((await formOf(request)).get("response_format")).toBe("srt");
    expect(route.rawAnswer?.(body, ctx())).toBe(true);
  });
});
