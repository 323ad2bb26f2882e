import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * Config guardrails on the other inference families: an image prompt or text to speak is judged like a chat
 * message (a denial answers 446 and the provider never sees the request), and a speech answer's bytes pass an
 * output check untouched (audio holds no text to judge).
 */

let gateway: TestGateway;
let upstream: MockServer;

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([
    startTestGateway(),
    startMockServer((request, response) => {
      if (request.path === "/v1/audio/speech") {
        response.writeHead(200, { "content-type": "audio/mpeg" });
        response.end(Buffer.from([0xff, 0xfb, 0x90, 0x00, 0x01]));
        return;
      }
      if (request.path === "/v1/audio/transcriptions") return sendJson(response, 200, { text: "my password is 42" });
      sendJson(response, 200, { created: 1, data: [{ b64_json: "aW1n" }] });
    }),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const forbidPassword = { "default.regexMatch": { rule: "(?i)password", not: true }, deny: true };

function client(config: Record<string, unknown>): OpenAI {
  return new OpenAI({
    apiKey: "provider-key",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-config": JSON.stringify({ provider: "openai", custom_host: `${upstream.url}/v1`, ...config }),
    },
  });
}

describe("guardrails on media families", () => {
  it("denies an image prompt and a text to speak that fail an input check, before any provider call", async () => {
    const guarded = client({ input_guardrails: [forbidPassword] });
    const before = upstream.requests.length;
    const image = await guarded.images.generate({ prompt: "draw my password" }).catch((error) => error);
    expect(image).toBeInstanceOf(APIError);
    expect((image as APIError).status).toBe(446);
    const speech = await guarded.audio.speech
      .create({ model: "tts-1", voice: "alloy", input: "the password is" })
      .catch((error) => error);
    expect((speech as APIError).status).toBe(446);
    expect(upstream.requests.length).toBe(before);

    const allowed = await guarded.images.generate({ prompt: "draw a cat" });
    expect(allowed.data?.[0]?.b64_json).toBe("aW1n");
  });

  it("passes audio bytes through an output check untouched, and judges a JSON transcript's text", async () => {
    const guarded = client({ input_guardrails: [forbidPassword], output_guardrails: [forbidPassword] });
    const speech = await guarded.audio.speech.create({ model: "tts-1", voice: "alloy", input: "hello" });
    expect([...new Uint8Array(await speech.arrayBuffer())]).toEqual([0xff, 0xfb, 0x90, 0x00, 0x01]);
    const file = new File([new Uint8Array([1, 2, 3])], "a.mp3", { type: "audio/mpeg" });
    const transcript = await guarded.audio.transcriptions.create({ model: "whisper-1", file }).catch((error) => error);
    expect((transcript as APIError).status).toBe(446);
  });
});
