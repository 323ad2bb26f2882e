import OpenAI from "openai";
import { afterAll, beforeAll } from "vitest";
import type { E2eTarget } from "../../helpers/e2e-target.ts";
import { type FaultUpstream, startFaultUpstream } from "../../helpers/fault-upstream.ts";
import type { MockServer } from "../../helpers/mock-server.ts";
import { validatingFetch } from "../../helpers/openai-schema.ts";
import { type OpenAIMock, startOpenAIMock } from "../../mocks/openai.ts";

/** What every part of the end-to-end suite shares: the target, the common mock upstreams and the clients. */
export interface SuiteContext {
  readonly gateway: E2eTarget;
  /** An OpenAI-compatible upstream and a failing one (fault-upstream.ts). */
  readonly openai: OpenAIMock;
  readonly faults: FaultUpstream;
  /** Mock servers closed after the suite (tests push the ones they start). */
  mocks: MockServer[];
  messages: Array<{ role: "user"; content: string }>;
  /** An openai SDK client through the gateway with the admin key and these gateway headers. */
  clientFor(headers: Record<string, string>, apiKey?: string): OpenAI;
  /** A JSON call of the gateway's API with a key (the admin key by default): status and parsed body. */
  api(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
  /** Chat JSON and chat stream through a client; answers both texts. */
  chatBoth(client: OpenAI, model: string): Promise<{ text: string | null; streamed: string; chunks: number }>;
}

/** Starts the target and the common mocks before the suite's tests, and stops them after. */
export function suiteContext(startTarget: () => Promise<E2eTarget>): SuiteContext {
  let gateway: E2eTarget | undefined;
  let openai: OpenAIMock | undefined;
  let faults: FaultUpstream | undefined;
  const mocks: MockServer[] = [];
  const messages = [{ role: "user" as const, content: "Hi" }];

  beforeAll(async () => {
    [gateway, openai, faults] = await Promise.all([startTarget(), startOpenAIMock(), startFaultUpstream()]);
    mocks.push(openai, faults);
  }, 600_000);

  afterAll(async () => {
    await gateway?.close();
    await Promise.all(mocks.map((mock) => mock.close()));
  });

  const suite: SuiteContext = {
    get gateway() {
      return gateway!;
    },
    get openai() {
      return openai!;
    },
    get faults() {
      return faults!;
    },
    mocks,
    messages,
    clientFor(headers, apiKey = "provider-key") {
      return new OpenAI({
        // Every OpenAI-shaped answer is checked against OpenAI's published OpenAPI document.
        fetch: validatingFetch(),
        apiKey,
        baseURL: `${suite.gateway.url}/v1`,
        defaultHeaders: { "x-gateway-api-key": suite.gateway.adminKey, ...headers },
        maxRetries: 0,
        timeout: 15_000,
      });
    },
    async api(method, path, body, key = suite.gateway.adminKey) {
      const response = await fetch(`${suite.gateway.url}${path}`, {
        method,
        headers: { "x-gateway-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      let json: any;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
      return { status: response.status, body: json };
    },
    async chatBoth(client, model) {
      const answer = await client.chat.completions.create({ model, messages });
      let streamed = "";
      let chunks = 0;
      const stream = await client.chat.completions.create({
        model,
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      for await (const chunk of stream) {
        chunks++;
        streamed += chunk.choices[0]?.delta?.content ?? "";
      }
      return { text: answer.choices[0]!.message.content, streamed, chunks };
    },
  };
  return suite;
}
