import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * The Audio family through the gateway with the official openai client: OpenAI, Azure OpenAI, Deepgram and
 * ElevenLabs mocks over real HTTP, each answering as its API reference documents:
 *   - OpenAI https://platform.openai.com/docs/api-reference/audio (Azure: the same bodies under
 *     /openai/deployments/{deployment}/audio/..., https://learn.microsoft.com/azure/ai-foundry/openai/reference)
 *   - Deepgram https://developers.deepgram.com/reference/speech-to-text-api/listen and .../text-to-speech-api/speak
 *   - ElevenLabs https://elevenlabs.io/docs/api-reference/text-to-speech/convert and .../speech-to-text/convert
 */

const KEYS = {
  openai: "sk-openai-provider-secret",
  azure: "0123456789abcdef0123456789abcdef",
  deepgram: "dg-provider-secret-key",
  elevenlabs: "xi-provider-secret-key",
};

/** A PCM WAV file (RIFF header + 16-bit mono samples) of the given length: music-metadata reads its duration. */
function wavFile(seconds: number, sampleRate = 16_000): Uint8Array {
  const samples = Math.round(seconds * sampleRate);
  const dataBytes = samples * 2;
  const buffer = Buffer.alloc(44 + dataBytes);
  buffer.write("RIFF", 0, "ascii");
  buffer.writeUInt32LE(36 + dataBytes, 4);
  buffer.write("WAVE", 8, "ascii");
  buffer.write("fmt ", 12, "ascii");
  buffer.writeUInt32LE(16, 16); // fmt chunk size
  buffer.writeUInt16LE(1, 20); // PCM
  buffer.writeUInt16LE(1, 22); // mono
  buffer.writeUInt32LE(sampleRate, 24);
  buffer.writeUInt32LE(sampleRate * 2, 28); // byte rate
  buffer.writeUInt16LE(2, 32); // block align
  buffer.writeUInt16LE(16, 34); // bits per sample
  buffer.write("data", 36, "ascii");
  buffer.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < samples; i++)
    buffer.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / sampleRate)), 44 + i * 2);
  return new Uint8Array(buffer);
}

const WAV = wavFile(2.5);
const audioFile = () => toFile(WAV, "speech.wav", { type: "audio/wav" });

const SRT = "1\n00:00:00,000 --> 00:00:01,500\nHello from the mock.\n\n";
const VTT = "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nHello from the mock.\n\n";
const SPEECH_CHUNKS = ["ID3-chunk-1|", "chunk-2|", "chunk-3|", "chunk-4"];
const CHUNK_DELAY_MS = 120;

let gateway: TestGateway;
let upstream: MockServer;
/** When the mock wrote the last speech chunk (the client must see the first one before). */
let speechFinishedAt = 0;

async function formOf(request: RecordedRequest): Promise<FormData> {
  return new Response(new Uint8Array(request.body), {
    headers: { "content-type": String(request.headers["content-type"]) },
  }).formData();
}

async function streamSpeech(res: ServerResponse, contentType: string): Promise<void> {
  res.writeHead(200, { "content-type": contentType, "transfer-encoding": "chunked" });
  for (const [index, chunk] of SPEECH_CHUNKS.entries()) {
    if (index > 0) await new Promise((resolve) => setTimeout(resolve, CHUNK_DELAY_MS));
    res.write(chunk);
  }
  speechFinishedAt = Date.now();
  res.end();
}

/** OpenAI's transcription answers by response_format; json carries no duration (as gpt-4o-transcribe's). */
async function openAITranscript(request: RecordedRequest, res: ServerResponse, task: string): Promise<void> {
  const form = await formOf(request);
  if (!(form.get("file") instanceof File)) return sendJson(res, 400, { error: { message: "file missing" } });
  const format = String(form.get("response_format") ?? "json");
  const text = (body: string) => {
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8" });
    res.end(body);
  };
  if (format === "text") return text("Hello from the mock.\n");
  if (format === "srt") return text(SRT);
  if (format === "vtt") return text(VTT);
  if (format === "verbose_json") {
    return sendJson(res, 200, {
      task,
      language: "english",
      duration: 2.5,
      text: "Hello from the mock.",
      segments: [
        {
          id: 0,
          seek: 0,
          start: 0,
          end: 1.5,
          text: " Hello from the mock.",
          tokens: [50364, 2425],
          temperature: 0,
          avg_logprob: -0.2,
          compression_ratio: 0.8,
          no_speech_prob: 0.01,
        },
      ],
    });
  }
  return sendJson(res, 200, { text: "Hello from the mock." });
}

const deepgramListen = {
  metadata: { request_id: "dg-req-1", created: "2025-06-01T12:00:00.000Z", duration: 2.5, channels: 1 },
  results: {
    channels: [
      {
        detected_language: "en",
        alternatives: [
          {
            transcript: "Hello there. See you.",
            confidence: 0.99,
            words: [
              { word: "hello", start: 0.1, end: 0.4, confidence: 0.99, punctuated_word: "Hello" },
              { word: "there", start: 0.4, end: 0.8, confidence: 0.99, punctuated_word: "there." },
              { word: "see", start: 1.4, end: 1.6, confidence: 0.99, punctuated_word: "See" },
              { word: "you", start: 1.6, end: 2.0, confidence: 0.99, punctuated_word: "you." },
            ],
          },
        ],
      },
    ],
    utterances: [
      { start: 0.1, end: 0.8, confidence: 0.99, channel: 0, transcript: "Hello there.", words: [], id: "u1" },
      { start: 1.4, end: 2.0, confidence: 0.99, channel: 0, transcript: "See you.", words: [], id: "u2" },
    ],
  },
};

const elevenLabsTranscript = {
  language_code: "en",
  language_probability: 0.99,
  text: "Good day.",
  words: [
    { text: "Good", start: 0.2, end: 0.5, type: "word", speaker_id: "speaker_0", logprob: -0.1 },
    { text: " ", start: 0.5, end: 0.55, type: "spacing", speaker_id: "speaker_0", logprob: 0 },
    { text: "day.", start: 0.55, end: 1.1, type: "word", speaker_id: "speaker_0", logprob: -0.1 },
  ],
};

async function route(request: RecordedRequest, res: ServerResponse): Promise<void> {
  const url = new URL(request.path, "http://mock");
  const path = url.pathname;
  // OpenAI
  if (path === "/openai-api/v1/audio/speech") {
    if (request.headers.authorization !== `Bearer ${KEYS.openai}`)
      return sendJson(res, 401, { error: { message: "bad key" } });
    return streamSpeech(res, "audio/mpeg");
  }
  if (path === "/openai-api/v1/audio/transcriptions") return openAITranscript(request, res, "transcribe");
  if (path === "/openai-api/v1/audio/translations") return openAITranscript(request, res, "translate");
  // Azure OpenAI
  const azure = /^\/openai\/deployments\/([^/]+)\/audio\/(speech|transcriptions|translations)$/.exec(path);
  if (azure) {
    if (request.headers["api-key"] !== KEYS.azure)
      return sendJson(res, 401, { error: { code: "401", message: "Access denied" } });
    if (!url.searchParams.get("api-version"))
      return sendJson(res, 400, { error: { code: "BadRequest", message: "api-version" } });
    if (azure[2] === "speech") return streamSpeech(res, "audio/mpeg");
    return openAITranscript(request, res, azure[2] === "translations" ? "translate" : "transcribe");
  }
  // Deepgram
  if (path === "/deepgram/v1/listen") {
    if (request.headers.authorization !== `Token ${KEYS.deepgram}`) {
      return sendJson(res, 401, { err_code: "INVALID_AUTH", err_msg: "Invalid credentials.", request_id: "r" });
    }
    if (!String(request.headers["content-type"]).startsWith("audio/") || request.body.length === 0) {
      return sendJson(res, 400, { err_code: "Bad Request", err_msg: "No audio", request_id: "r" });
    }
    return sendJson(res, 200, deepgramListen);
  }
  if (path === "/deepgram/v1/speak") {
    if (request.headers.authorization !== `Token ${KEYS.deepgram}`)
      return sendJson(res, 401, { err_code: "INVALID_AUTH" });
    return streamSpeech(res, url.searchParams.get("encoding") === "mp3" ? "audio/mpeg" : "audio/wav");
  }
  // ElevenLabs
  if (path.startsWith("/elevenlabs/v1/")) {
    if (request.headers["xi-api-key"] !== KEYS.elevenlabs) {
      return sendJson(res, 401, { detail: { status: "invalid_api_key", message: "Invalid API key" } });
    }
    if (path.startsWith("/elevenlabs/v1/text-to-speech/")) return streamSpeech(res, "audio/mpeg");
    if (path === "/elevenlabs/v1/speech-to-text") {
      const form = await formOf(request);
      if (!form.get("model_id") || !(form.get("file") instanceof File)) {
        return sendJson(res, 422, {
          detail: [{ loc: ["body", "model_id"], msg: "field required", type: "value_error.missing" }],
        });
      }
      return sendJson(res, 200, elevenLabsTranscript);
    }
  }
  sendJson(res, 404, { error: { message: `no route ${path}` } });
}

function clientFor(provider: string, key: string, host: string, extra: Record<string, string> = {}): OpenAI {
  return new OpenAI({
    apiKey: key,
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": provider,
      "x-gateway-custom-host": host,
      ...extra,
    },
    maxRetries: 0,
  });
}

let openai: OpenAI;
let deepgram: OpenAI;
let elevenlabs: OpenAI;
let azure: OpenAI;

/** The request log of a trace, once written (GET /v1/logs?trace_id=..., then the record). */
async function logOf(trace: string): Promise<any> {
  const headers = { "x-gateway-api-key": gateway.adminKey };
  let id: string | undefined;
  await expect
    .poll(
      async () => {
        const list = await (await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, { headers })).json();
        id = list.data?.[0]?.id;
        return id;
      },
      { timeout: 5000 },
    )
    .toBeDefined();
  let record: any;
  // Metering of relayed answers ends with the body: wait for the finished record.
  await expect
    .poll(
      async () => {
        record = await (await fetch(`${gateway.url}/v1/logs/${id}`, { headers })).json();
        return record.units !== undefined;
      },
      { timeout: 5000 },
    )
    .toBe(true);
  return record;
}

const traced = () => {
  const trace = randomUUID();
  return { trace, options: { headers: { "x-gateway-trace-id": trace } } };
};

beforeAll(async () => {
  upstream = await startMockServer(route);
  gateway = await startTestGateway();
  openai = clientFor("openai", KEYS.openai, `${upstream.url}/openai-api/v1`);
  deepgram = clientFor("deepgram", KEYS.deepgram, `${upstream.url}/deepgram/v1`);
  elevenlabs = clientFor("elevenlabs", KEYS.elevenlabs, `${upstream.url}/elevenlabs/v1`);
  azure = clientFor("azure-openai", KEYS.azure, upstream.url, { "x-gateway-azure-deployment-id": "audio-deployment" });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** Reads a speech answer, noting when its first chunk arrived. */
async function readSpeech(response: Response): Promise<{ text: string; firstChunkAt: number }> {
  const reader = response.body!.getReader();
  const first = await reader.read();
  const firstChunkAt = Date.now();
  const parts = [Buffer.from(first.value ?? [])];
  for (;;) {
    const next = await reader.read();
    if (next.done) break;
    parts.push(Buffer.from(next.value));
  }
  return { text: Buffer.concat(parts).toString("utf8"), firstChunkAt };
}

describe("speech", () => {
  it("OpenAI: audio.speech.create streams the bytes as they arrive; the log counts characters and cost", async () => {
    const { trace, options } = traced();
    speechFinishedAt = 0;
    const response = await openai.audio.speech.create(
      { model: "tts-1", input: "Hello, world!", voice: "alloy" },
      options,
    );
    expect(response.headers.get("content-type")).toBe("audio/mpeg");
    const { text, firstChunkAt } = await readSpeech(response);
    expect(text).toBe(SPEECH_CHUNKS.join(""));
    // The first chunk reached the client while the mock was still writing the rest.
    expect(speechFinishedAt).toBeGreaterThan(0);
    expect(firstChunkAt).toBeLessThan(speechFinishedAt);
    expect(upstream.requests.at(-1)!.json()).toEqual({ model: "tts-1", input: "Hello, world!", voice: "alloy" });
    const log = await logOf(trace);
    expect(log.units).toEqual({ characters: 13 });
    expect(log.cost).toBeCloseTo(13 * (15 / 1_000_000), 12);
    expect(JSON.stringify(log)).not.toContain(KEYS.openai);
  });

  it("Deepgram: /v1/speak with the encoding of response_format, relayed, priced per character", async () => {
    const { trace, options } = traced();
    const response = await deepgram.audio.speech.create(
      { model: "aura-2-thalia-en", input: "Hi there", voice: "alloy", response_format: "wav" },
      options,
    );
    expect((await readSpeech(response)).text).toBe(SPEECH_CHUNKS.join(""));
    const sent = upstream.requests.at(-1)!;
    const url = new URL(sent.path, "http://mock");
    expect(url.pathname).toBe("/deepgram/v1/speak");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      model: "aura-2-thalia-en",
      encoding: "linear16",
      container: "wav",
    });
    expect(sent.json()).toEqual({ text: "Hi there" });
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "deepgram", units: { characters: 8 } });
    expect(log.cost).toBeCloseTo(8 * (0.03 / 1000), 12);
    expect(JSON.stringify(log)).not.toContain(KEYS.deepgram);
  });

  it("ElevenLabs: /v1/text-to-speech/{voice} with model_id and xi-api-key, relayed, priced per character", async () => {
    const { trace, options } = traced();
    speechFinishedAt = 0;
    const response = await elevenlabs.audio.speech.create(
      { model: "eleven_multilingual_v2", input: "Bonjour", voice: "JBFqnCBsd6RMkjVDRZzb" },
      options,
    );
    const { text, firstChunkAt } = await readSpeech(response);
    expect(text).toBe(SPEECH_CHUNKS.join(""));
    expect(firstChunkAt).toBeLessThan(speechFinishedAt);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe("/elevenlabs/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb?output_format=mp3_44100_128");
    expect(sent.json()).toEqual({ text: "Bonjour", model_id: "eleven_multilingual_v2" });
    expect(sent.headers.authorization).toBeUndefined();
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "elevenlabs", units: { characters: 7 } });
    expect(log.cost).toBeCloseTo(7 * (0.1 / 1000), 12);
    expect(JSON.stringify(log)).not.toContain(KEYS.elevenlabs);
  });

  it("ElevenLabs: a rejected key comes back as a 401 in OpenAI's shape", async () => {
    const bad = clientFor("elevenlabs", "wrong-key", `${upstream.url}/elevenlabs/v1`);
    const error = await bad.audio.speech
      .create({ model: "eleven_multilingual_v2", input: "x", voice: "v" })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(error.error).toMatchObject({ message: "Invalid API key", code: "invalid_api_key" });
  });
});

describe("transcriptions and translations", () => {
  const FORMATS = ["json", "text", "srt", "verbose_json", "vtt"] as const;

  it("OpenAI: every response_format comes back as OpenAI wrote it", async () => {
    const answers: Record<string, unknown> = {};
    for (const response_format of FORMATS) {
      answers[response_format] = await openai.audio.transcriptions.create({
        model: "whisper-1",
        file: await audioFile(),
        response_format,
      });
    }
    expect(answers.json).toEqual({ text: "Hello from the mock." });
    expect(answers.text).toBe("Hello from the mock.\n");
    expect(answers.srt).toBe(SRT);
    expect(answers.vtt).toBe(VTT);
    expect(answers.verbose_json).toMatchObject({ task: "transcribe", duration: 2.5, segments: [{ end: 1.5 }] });
  });

  it("OpenAI json without a duration: the 2.5 s WAV itself is metered and priced per second", async () => {
    const { trace, options } = traced();
    await openai.audio.transcriptions.create({ model: "whisper-1", file: await audioFile() }, options);
    const form = await formOf(upstream.requests.at(-1)!);
    expect(new Uint8Array(await (form.get("file") as File).arrayBuffer())).toEqual(WAV);
    const log = await logOf(trace);
    expect(log.units.seconds).toBeCloseTo(2.5, 6);
    expect(log.cost).toBeCloseTo(2.5 * (0.006 / 60), 12);
    expect(JSON.stringify(log)).not.toContain(KEYS.openai);
  });

  it("OpenAI srt relayed as text is metered from the file too", async () => {
    const { trace, options } = traced();
    const srt = await openai.audio.transcriptions.create(
      { model: "whisper-1", file: await audioFile(), response_format: "srt" },
      options,
    );
    expect(srt).toBe(SRT);
    const log = await logOf(trace);
    expect(log.units.seconds).toBeCloseTo(2.5, 6);
    expect(log.responseBody).toBe(SRT);
  });

  it("OpenAI: audio.translations.create", async () => {
    const { trace, options } = traced();
    const translation = await openai.audio.translations.create(
      { model: "whisper-1", file: await audioFile(), response_format: "verbose_json" },
      options,
    );
    expect(translation).toMatchObject({ task: "translate", text: "Hello from the mock." });
    expect(new URL(upstream.requests.at(-1)!.path, "http://mock").pathname).toBe("/openai-api/v1/audio/translations");
    const log = await logOf(trace);
    expect(log.units).toEqual({ seconds: 2.5 });
  });

  it("Deepgram: every response_format made from /v1/listen, raw audio sent, metadata.duration metered", async () => {
    const answers: Record<string, unknown> = {};
    for (const response_format of FORMATS) {
      answers[response_format] = await deepgram.audio.transcriptions.create({
        model: "nova-3",
        file: await audioFile(),
        response_format,
        language: "en",
      });
      const sent = upstream.requests.at(-1)!;
      expect(sent.headers["content-type"]).toBe("audio/wav");
      expect(new Uint8Array(sent.body)).toEqual(WAV);
      expect(new URL(sent.path, "http://mock").searchParams.get("language")).toBe("en");
    }
    expect(answers.json).toEqual({ text: "Hello there. See you.", usage: { type: "duration", seconds: 3 } });
    expect(answers.text).toBe("Hello there. See you.\n");
    expect(answers.srt).toBe(
      "1\n00:00:00,100 --> 00:00:00,800\nHello there.\n\n2\n00:00:01,400 --> 00:00:02,000\nSee you.\n\n",
    );
    expect(answers.vtt).toBe(
      "WEBVTT\n\n00:00:00.100 --> 00:00:00.800\nHello there.\n\n00:00:01.400 --> 00:00:02.000\nSee you.\n\n",
    );
    expect(answers.verbose_json).toMatchObject({
      task: "transcribe",
      language: "en",
      duration: 2.5,
      segments: [
        { id: 0, start: 0.1, end: 0.8, text: "Hello there." },
        { id: 1, start: 1.4, end: 2, text: "See you." },
      ],
    });

    const { trace, options } = traced();
    await deepgram.audio.transcriptions.create(
      { model: "nova-3", file: await audioFile(), response_format: "srt" },
      options,
    );
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "deepgram", units: { seconds: 2.5 } });
    expect(log.cost).toBeCloseTo(2.5 * (0.0043 / 60), 12);
    expect(JSON.stringify(log)).not.toContain(KEYS.deepgram);
  });

  it("Deepgram: a bad key is a 401 with Deepgram's message; translations are unsupported", async () => {
    const bad = clientFor("deepgram", "wrong", `${upstream.url}/deepgram/v1`);
    const error = await bad.audio.transcriptions
      .create({ model: "nova-3", file: await audioFile() })
      .catch((caught) => caught);
    expect(error.status).toBe(401);
    expect(error.error).toMatchObject({ message: "Invalid credentials.", code: "INVALID_AUTH" });
    const unsupported = await deepgram.audio.translations
      .create({ model: "nova-3", file: await audioFile() })
      .catch((caught) => caught);
    expect(unsupported.status).toBe(400);
    expect(unsupported.error).toMatchObject({ code: "unsupported_route" });
  });

  it("ElevenLabs: /v1/speech-to-text form, srt rendered from the words, the file's duration metered", async () => {
    const { trace, options } = traced();
    const srt = await elevenlabs.audio.transcriptions.create(
      { model: "scribe_v1", file: await audioFile(), response_format: "srt" },
      options,
    );
    expect(srt).toBe("1\n00:00:00,200 --> 00:00:01,100\nGood day.\n\n");
    const form = await formOf(upstream.requests.at(-1)!);
    expect(form.get("model_id")).toBe("scribe_v1");
    expect((form.get("file") as File).name).toBe("speech.wav");
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "elevenlabs" });
    expect(log.units.seconds).toBeCloseTo(2.5, 6);
    expect(log.cost).toBeCloseTo(2.5 * (0.4 / 3600), 12);
    const json = await elevenlabs.audio.transcriptions.create({ model: "scribe_v1", file: await audioFile() });
    expect(json).toEqual({ text: "Good day." });
  });

  it("Azure OpenAI: deployment audio paths with api-key, transcripts and speech relayed", async () => {
    const { trace, options } = traced();
    const vtt = await azure.audio.transcriptions.create(
      { model: "whisper-1", file: await audioFile(), response_format: "vtt" },
      options,
    );
    expect(vtt).toBe(VTT);
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toMatch(/^\/openai\/deployments\/audio-deployment\/audio\/transcriptions\?api-version=/);
    expect(sent.headers["api-key"]).toBe(KEYS.azure);
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "azure-openai" });
    expect(log.units.seconds).toBeCloseTo(2.5, 6);
    expect(log.cost).toBeCloseTo(2.5 * (0.006 / 60), 12);
    expect(JSON.stringify(log)).not.toContain(KEYS.azure);

    const translation = await azure.audio.translations.create({ model: "whisper-1", file: await audioFile() });
    expect(translation).toEqual({ text: "Hello from the mock." });
    const speech = await azure.audio.speech.create({ model: "tts-1", input: "Hi", voice: "alloy" });
    expect((await readSpeech(speech)).text).toBe(SPEECH_CHUNKS.join(""));
    expect(new URL(upstream.requests.at(-1)!.path, "http://mock").pathname).toBe(
      "/openai/deployments/audio-deployment/audio/speech",
    );
  });
});

describe("bad requests", () => {
  it("a bad response_format is a 400 naming it", async () => {
    const error = await openai.audio.transcriptions
      .create({ model: "whisper-1", file: await audioFile(), response_format: "xml" as "json" })
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ param: "response_format", type: "invalid_request_error" });
    const speech = await openai.audio.speech
      .create({ model: "tts-1", input: "x", voice: "alloy", response_format: "ogg" as "mp3" })
      .catch((caught) => caught);
    expect(speech.status).toBe(400);
    expect(speech.error).toMatchObject({ param: "response_format" });
  });

  it("a format the provider cannot give is a 400 naming response_format before any upstream call", async () => {
    const before = upstream.requests.length;
    const error = await elevenlabs.audio.speech
      .create({ model: "eleven_multilingual_v2", input: "x", voice: "v", response_format: "aac" })
      .catch((caught) => caught);
    expect(error.status).toBe(400);
    expect(error.error).toMatchObject({ param: "response_format" });
    expect(upstream.requests.length).toBe(before);
  });

  it("a form without file is a 400 naming file", async () => {
    const form = new FormData();
    form.append("model", "whisper-1");
    const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        authorization: `Bearer ${KEYS.openai}`,
        "x-gateway-custom-host": `${upstream.url}/openai-api/v1`,
      },
      body: form,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "file", type: "invalid_request_error" });
  });

  it("a JSON body on a multipart route is a 400 saying to send multipart/form-data", async () => {
    const response = await fetch(`${gateway.url}/v1/audio/translations`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "deepgram",
        authorization: `Bearer ${KEYS.deepgram}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "nova-3", file: "speech.wav" }),
    });
    expect(response.status).toBe(400);
    const { error } = await response.json();
    expect(error).toMatchObject({ code: "invalid_content_type", type: "invalid_request_error" });
    expect(error.message).toMatch(/multipart\/form-data/);
  });
});
