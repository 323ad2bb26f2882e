import { createAnthropic } from "@ai-sdk/anthropic";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import { ChatAnthropic } from "@langchain/anthropic";
import { tool as langchainTool } from "@langchain/core/tools";
import { ChatOpenAI } from "@langchain/openai";
import { generateObject, generateText, stepCountIs, streamText, tool } from "ai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { type BundleGateway, removeBuiltBundle, startBundleGateway } from "../helpers/bundle-gateway.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { startGoogleMock } from "../mocks/google.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Third-party clients nobody here wrote, unmodified, through the gateway users run (the `npm start` bundle),
 * against OpenAI-, Anthropic- and Gemini-speaking mock upstreams (issue 40): the AI SDK with @ai-sdk/anthropic,
 * LangChain's ChatOpenAI and ChatAnthropic, the Anthropic SDK (the key as x-api-key), @google/genai and portkey-ai.
 */

let gateway: BundleGateway;
let openai: OpenAIMock;
let anthropic: AnthropicMock;
let google: MockServer;

beforeAll(async () => {
  [gateway, openai, anthropic, google] = await Promise.all([
    startBundleGateway(),
    startOpenAIMock({ reply: "Hello from chat." }),
    startAnthropicMock(),
    startGoogleMock({ apiKey: "google-key" }),
  ]);
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai, anthropic, google].map((mock) => mock?.close()));
  await removeBuiltBundle();
});

/** Where each client's requests go: the gateway's headers for a provider behind a mock. */
const upstreams = () => ({
  anthropic: { "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropic.url },
  openai: { "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` },
  google: { "x-gateway-provider": "google", "x-gateway-custom-host": google.url },
});
const withKey = (headers: Record<string, string>) => ({ "x-gateway-api-key": gateway.adminKey, ...headers });

const weatherSchema = z.object({ city: z.string() });
const citySchema = z.object({ name: z.string(), population: z.number() });

describe("the AI SDK with @ai-sdk/anthropic", () => {
  const targets = () => [
    { name: "anthropic", model: "claude-sonnet-4-6", key: "sk-ant", headers: upstreams().anthropic },
    { name: "openai (translated)", model: "gpt-4o-mini", key: "sk-openai", headers: upstreams().openai },
  ];

  it("generateText, streamText, a tool loop and generateObject", async () => {
    for (const { name, model, key, headers } of targets()) {
      const provider = createAnthropic({ baseURL: `${gateway.url}/v1`, apiKey: key, headers: withKey(headers) });
      const text = await generateText({ model: provider(model), prompt: "Hi" });
      expect(text.text, name).toBeTruthy();
      expect(text.usage.inputTokens, name).toBeGreaterThan(0);

      const streamed = streamText({ model: provider(model), prompt: "Hi" });
      let chunks = "";
      for await (const delta of streamed.textStream) chunks += delta;
      expect(chunks, name).toBe(await streamed.text);
      expect(chunks, name).toBeTruthy();

      const calls: unknown[] = [];
      const loop = await generateText({
        model: provider(model),
        prompt: "Weather in Paris?",
        tools: {
          weather: tool({
            description: "Weather for a city",
            inputSchema: weatherSchema,
            execute: async (input) => {
              calls.push(input);
              return { temperature: 21 };
            },
          }),
        },
        stopWhen: stepCountIs(3),
      });
      expect(calls, name).toEqual([{ city: "Paris" }]);
      expect(loop.steps.length, name).toBeGreaterThanOrEqual(2);
      expect(loop.text, name).toBeTruthy();

      const object = await generateObject({ model: provider(model), schema: citySchema, prompt: "A city" });
      expect(citySchema.parse(object.object), name).toEqual({ name: "Paris", population: 21 });
    }
  });
});

describe("LangChain", () => {
  const weather = langchainTool(async ({ city }) => `21 degrees in ${city}`, {
    name: "weather",
    description: "Weather for a city",
    schema: weatherSchema,
  });

  async function exercise(name: string, model: ChatAnthropic | ChatOpenAI) {
    const answer = await model.invoke("Hi");
    expect(answer.text, name).toBeTruthy();
    let streamed = "";
    for await (const chunk of await model.stream("Hi")) streamed += chunk.text;
    expect(streamed, name).toBeTruthy();
    const asked = await model.bindTools([weather]).invoke("Weather in Paris?");
    expect(asked.tool_calls?.[0], name).toMatchObject({ name: "weather", args: { city: "Paris" } });
    const structured = await model.withStructuredOutput(citySchema).invoke("A city");
    expect(structured, name).toEqual({ name: "Paris", population: 21 });
  }

  it("ChatAnthropic: invoke, stream, tools, structured output (Anthropic natively, OpenAI translated)", async () => {
    for (const [name, model, key, headers] of [
      ["anthropic", "claude-sonnet-4-6", "sk-ant", upstreams().anthropic],
      ["openai", "gpt-4o-mini", "sk-openai", upstreams().openai],
    ] as const) {
      const chat = new ChatAnthropic({
        model,
        apiKey: key,
        anthropicApiUrl: gateway.url,
        clientOptions: { defaultHeaders: withKey(headers) },
        maxRetries: 0,
      });
      await exercise(`ChatAnthropic ${name}`, chat);
    }
    expect(anthropic.requests.some((request) => request.headers["x-api-key"] === "sk-ant")).toBe(true);
  });

  it("ChatOpenAI: invoke, stream, tools, structured output (OpenAI, and Anthropic through chat)", async () => {
    for (const [name, model, key, headers] of [
      ["openai", "gpt-4o-mini", "sk-openai", upstreams().openai],
      ["anthropic", "claude-sonnet-4-6", "sk-ant", upstreams().anthropic],
    ] as const) {
      const chat = new ChatOpenAI({
        model,
        apiKey: key,
        configuration: { baseURL: `${gateway.url}/v1`, defaultHeaders: withKey(headers) },
        maxRetries: 0,
      });
      await exercise(`ChatOpenAI ${name}`, chat);
    }
  });
});

describe("vendor SDKs", () => {
  it("@anthropic-ai/sdk with the provider key as x-api-key", async () => {
    for (const [model, key, headers] of [
      ["claude-sonnet-4-6", "sk-ant", upstreams().anthropic],
      ["gpt-4o-mini", "sk-openai", upstreams().openai],
    ] as const) {
      const client = new Anthropic({
        apiKey: key,
        baseURL: gateway.url,
        defaultHeaders: withKey(headers),
        maxRetries: 0,
      });
      const message = await client.messages.create({
        model,
        max_tokens: 64,
        messages: [{ role: "user", content: "Hi" }],
      });
      expect(message.content[0]?.type).toBe("text");
      await expect(
        client.messages.create({ model, max_tokens: 0, messages: [{ role: "user", content: "Hi" }] }),
      ).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    }
    expect(openai.requests.some((request) => request.headers.authorization === "Bearer sk-openai")).toBe(true);
  });

  it("@google/genai: Google natively, OpenAI translated", async () => {
    for (const [model, key, headers] of [
      ["gemini-2.5-flash", "google-key", upstreams().google],
      ["gpt-4o-mini", "sk-openai", upstreams().openai],
    ] as const) {
      const ai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url, headers: withKey(headers) } });
      const answer = await ai.models.generateContent({ model, contents: "Hi" });
      expect(answer.text, model).toBeTruthy();
      let streamed = "";
      for await (const chunk of await ai.models.generateContentStream({ model, contents: "Hi" }))
        streamed += chunk.text ?? "";
      expect(streamed, model).toBe(answer.text);
      expect((await ai.models.countTokens({ model, contents: "Hi there" })).totalTokens, model).toBeGreaterThan(0);
    }
  });

  it("portkey-ai: a cache-only config beside x-portkey-provider, and path ids repeated in bodies", async () => {
    openai.reset();
    const portkey = new Portkey({
      apiKey: gateway.adminKey,
      baseURL: `${gateway.url}/v1`,
      provider: "openai",
      Authorization: "Bearer sk-openai",
      customHost: `${openai.url}/v1`,
      config: { cache: { mode: "simple" }, retry: { attempts: 1 } },
    });
    const messages = [{ role: "user" as const, content: `cache ${Date.now()}` }];
    await portkey.chat.completions.create({ model: "gpt-4o-mini", messages });
    await portkey.chat.completions.create({ model: "gpt-4o-mini", messages });
    expect(openai.requests).toHaveLength(1);
    const created: any = await portkey.configs.create({ name: "no slug", config: { retry: { attempts: 1 } } });
    const updated: any = await portkey.configs.update({ slug: created.id, name: "renamed" });
    expect(updated).toMatchObject({ id: created.id, name: "renamed" });
    const exported: any = await portkey.logs.exports.create({ requestedData: ["id", "status"] } as never);
    const changed: any = await portkey.logs.exports.update({ exportId: exported.id, requestedData: ["id"] });
    expect(changed.requested_data).toEqual(["id"]);
  });
});
