import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startAwsGateway } from "../helpers/aws-gateway.ts";
import { startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * A response is readable and chainable the moment its answer has reached the client (issue 40, item 2): a JSON
 * answer is stored before it is sent, a stream before its terminal event. A chain of 20 turns, JSON and streamed
 * in turn, each sent the instant the previous one ended (a stream is left at its `response.completed` event),
 * with a retrieve between turns, never meets a 404: on the local platform (SQLite + folder) and on the AWS store
 * adapters (DynamoDB and S3 emulators), natively (OpenAI) and translated (Anthropic).
 */

const TURNS = 20;

let openaiMock: OpenAIMock;
let anthropicMock: AnthropicMock;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  openaiMock = await startOpenAIMock();
  anthropicMock = await startAnthropicMock({ scenario: "text" });
});

afterAll(async () => {
  for (const close of closers) await close();
  for (const mock of [openaiMock, anthropicMock] as MockServer[]) await mock?.close();
});

interface Platform {
  url: string;
  adminKey: string;
}

const platforms: Array<[string, () => Promise<Platform>]> = [
  [
    "local",
    async () => {
      const gateway = await startTestGateway();
      closers.push(() => gateway.close());
      return gateway;
    },
  ],
  [
    "aws",
    async () => {
      const gateway = await startAwsGateway(inject("emulators"));
      closers.push(() => gateway.close());
      return gateway;
    },
  ],
];

function clientFor(platform: Platform, provider: "openai" | "anthropic"): OpenAI {
  const host = provider === "openai" ? `${openaiMock.url}/v1` : anthropicMock.url;
  return new OpenAI({
    apiKey: "sk-provider",
    baseURL: `${platform.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": platform.adminKey,
      "x-gateway-provider": provider,
      "x-gateway-custom-host": host,
    },
  });
}

/** One turn: JSON, or a stream read up to its terminal event and left there. Answers the response's id. */
async function turn(client: OpenAI, model: string, input: string, previous: string | undefined, streamed: boolean) {
  const params = { model, input, ...(previous ? { previous_response_id: previous } : {}) };
  if (!streamed) return (await client.responses.create(params)).id;
  const stream = await client.responses.create({ ...params, stream: true });
  for await (const event of stream) {
    if (event.type === "response.completed") return event.response.id;
    if (event.type === "response.failed" || event.type === "error") throw new Error(JSON.stringify(event));
  }
  throw new Error("the stream ended without response.completed");
}

describe.each(platforms)("a chain of %s responses", (_name, start) => {
  let platform: Platform;
  beforeAll(async () => {
    platform = await start();
  });

  it.each([
    ["openai", "gpt-4o-mini"],
    ["anthropic", "claude-3-5-sonnet-20241022"],
  ] as const)(
    "20 turns on %s, each sent the instant the previous ended, never 404",
    async (provider, model) => {
      const client = clientFor(platform, provider);
      const mock: MockServer = provider === "openai" ? openaiMock : anthropicMock;
      let previous: string | undefined;
      for (let index = 0; index < TURNS; index++) {
        const id = await turn(client, model, `turn ${index}`, previous, index % 2 === 1);
        // Readable at once, before anything else happens.
        expect((await client.responses.retrieve(id)).id).toBe(id);
        previous = id;
      }
      // The last turn's upstream request carried the whole conversation: every turn and every answer before it.
      const sent = JSON.parse(mock.requests.at(-1)!.body.toString());
      const turns = provider === "openai" ? sent.input : sent.messages;
      expect(turns).toHaveLength(2 * TURNS - 1);
      expect(JSON.stringify(turns)).toContain("turn 0");
    },
    120_000,
  );

  it.each([
    ["openai", "gpt-4o-mini"],
    ["anthropic", "claude-3-5-sonnet-20241022"],
  ] as const)(
    "turns that share one trace id (an agent's steps grouped) are still distinct responses on %s",
    async (provider, model) => {
      const client = clientFor(platform, provider);
      const headers = { "x-gateway-trace-id": `agent-run-${provider}-${Date.now()}` };
      const ids: string[] = [];
      let previous: string | undefined;
      for (let index = 0; index < 3; index++) {
        const params = { model, input: `step ${index}`, ...(previous ? { previous_response_id: previous } : {}) };
        const response = await client.responses.create(params, { headers });
        ids.push(response.id);
        previous = response.id;
      }
      expect(new Set(ids).size).toBe(3);
      // Each is its own stored response: the first still holds the first step, not a later one.
      const first = await client.responses.inputItems.list(ids[0]!);
      expect(JSON.stringify(first.data)).toContain("step 0");
      expect(JSON.stringify(first.data)).not.toContain("step 2");
    },
    60_000,
  );
});
