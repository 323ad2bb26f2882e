import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { Agent, Runner, tool as agentTool } from "@openai/agents";
import { OpenAIResponsesModel, OpenAIResponsesWSModel } from "@openai/agents-openai";
import { generateObject, generateText, type LanguageModel, stepCountIs, streamText, tool } from "ai";
import OpenAI from "openai";
import { ResponsesWS } from "openai/resources/responses/ws";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as z from "zod";
import { type BundleGateway, removeBuiltBundle, startBundleGateway } from "../helpers/bundle-gateway.ts";
import { assertOpenAISchema, openAISchemaOfRequest, validatingFetch } from "../helpers/openai-schema.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Third-party OpenAI clients, unmodified, against the `npm start` bundle (issue 40): the AI SDK (`ai` with
 * `@ai-sdk/openai`'s chat and Responses models, `@ai-sdk/openai-compatible`), the OpenAI Agents SDK (a function
 * tool over HTTP and over the Responses WebSocket) and the `openai` SDK's Responses API over HTTP and WebSocket,
 * each against an OpenAI-speaking upstream (native) and an Anthropic-speaking one (translated). Every answer the
 * AI SDK and the openai SDK read over HTTP is validated against OpenAI's published OpenAPI document.
 */

let gateway: BundleGateway;
let openaiMock: OpenAIMock;
let anthropicMock: AnthropicMock;

beforeAll(async () => {
  [gateway, openaiMock, anthropicMock] = await Promise.all([
    startBundleGateway(),
    startOpenAIMock({ toolArguments: { city: "Paris" } }),
    startAnthropicMock(),
  ]);
}, 120_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiMock?.close(), anthropicMock?.close()]);
  await removeBuiltBundle();
});

const UPSTREAMS = [
  { name: "openai", model: "gpt-4o-mini" },
  { name: "anthropic", model: "claude-3-5-sonnet-20241022" },
] as const;
type Upstream = (typeof UPSTREAMS)[number];

function headersFor(upstream: Upstream): Record<string, string> {
  return {
    "x-gateway-api-key": gateway.adminKey,
    "x-gateway-provider": upstream.name,
    "x-gateway-custom-host": upstream.name === "openai" ? `${openaiMock.url}/v1` : anthropicMock.url,
  };
}

const weather = tool({
  description: "The weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, temperature: 21 }),
});

/** generateText, streamText, a tool loop of 3 steps and generateObject on one AI SDK model. */
async function driveAiSdk(model: LanguageModel, label: string): Promise<void> {
  const text = await generateText({ model, prompt: "Say hello." });
  expect(text.text.length, label).toBeGreaterThan(0);

  const streamed = streamText({ model, prompt: "Say hello again." });
  let chunks = "";
  for await (const delta of streamed.textStream) chunks += delta;
  expect(chunks.length, label).toBeGreaterThan(0);
  expect(chunks).toBe(await streamed.text);

  // Step 1 calls the tool; step 2 is told to call it again (a model answers in text once its tool has answered,
  // as the mocks do); step 3 may not, and answers.
  const loop = await generateText({
    model,
    tools: { weather },
    prompt: "What is the weather in Paris?",
    stopWhen: stepCountIs(3),
    prepareStep: ({ stepNumber }) =>
      stepNumber === 1 ? { toolChoice: "required" } : stepNumber === 2 ? { toolChoice: "none" } : undefined,
  });
  expect(loop.steps, label).toHaveLength(3);
  expect(loop.steps[0]!.toolCalls[0]?.toolName, label).toBe("weather");
  expect(loop.steps[1]!.toolResults[0]?.output, label).toEqual({ city: expect.any(String), temperature: 21 });
  expect(loop.steps[2]!.toolCalls, label).toHaveLength(0);
  expect(loop.text.length, label).toBeGreaterThan(0);

  const object = await generateObject({
    model,
    schema: z.object({ city: z.string(), celsius: z.number() }),
    prompt: "Paris, 21 degrees, as JSON.",
  });
  expect(object.object, label).toEqual({ city: expect.any(String), celsius: expect.any(Number) });
}

describe.each(UPSTREAMS)("clients against an $name upstream", (upstream) => {
  const label = upstream.name;

  it("the AI SDK's chat model: generateText, streamText, a 3-step tool loop, generateObject", async () => {
    const provider = createOpenAI({
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      headers: headersFor(upstream),
      fetch: validatingFetch(openAISchemaOfRequest),
    });
    await driveAiSdk(provider.chat(upstream.model), `${label} chat`);
  });

  it("the AI SDK's Responses model (its default): the same, item references resolved at step 2+", async () => {
    const sentBodies: string[] = [];
    const validating = validatingFetch(openAISchemaOfRequest);
    const provider = createOpenAI({
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      headers: headersFor(upstream),
      fetch: (input, init) => {
        if (typeof init?.body === "string") sentBodies.push(init.body);
        return validating(input, init);
      },
    });
    const mock = upstream.name === "openai" ? openaiMock : anthropicMock;
    const before = mock.requests.length;
    await driveAiSdk(provider(upstream.model), `${label} responses`);
    // The tool loop's later steps referred to the earlier answers' text items by id (store is on, the SDK's
    // default; the Anthropic upstream's tool-use answers have text beside the call, the OpenAI mock's do not),
    // and those references reached the provider resolved into the items they name.
    if (upstream.name === "anthropic") expect(sentBodies.some((body) => body.includes('"item_reference"'))).toBe(true);
    const sent = mock.requests.slice(before);
    expect(sent.some((request) => request.body.toString().includes("item_reference"))).toBe(false);
  });

  it("@ai-sdk/openai-compatible: generateText, streamText and a tool loop", async () => {
    const provider = createOpenAICompatible({
      name: "gateway",
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      headers: headersFor(upstream),
      fetch: validatingFetch(openAISchemaOfRequest),
    });
    const model = provider.chatModel(upstream.model);
    expect((await generateText({ model, prompt: "Hi" })).text.length).toBeGreaterThan(0);
    let streamed = "";
    for await (const delta of streamText({ model, prompt: "Hi" }).textStream) streamed += delta;
    expect(streamed.length).toBeGreaterThan(0);
    const loop = await generateText({
      model,
      tools: { weather },
      prompt: "Weather in Paris?",
      stopWhen: stepCountIs(3),
      prepareStep: ({ stepNumber }) =>
        stepNumber === 1 ? { toolChoice: "required" } : stepNumber === 2 ? { toolChoice: "none" } : undefined,
    });
    expect(loop.steps).toHaveLength(3);
  });

  it("the openai SDK's Responses over HTTP (validated) and over one WebSocket with a chain", async () => {
    const client = new OpenAI({
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: headersFor(upstream),
      fetch: validatingFetch(openAISchemaOfRequest),
    });
    const first = await client.responses.create({ model: upstream.model, input: "Hi" });
    expect((await client.responses.retrieve(first.id)).id).toBe(first.id);

    const socket = new ResponsesWS(client);
    const events: any[] = [];
    const completed = () => events.filter((event) => event.type === "response.completed");
    socket.on("event", (event: any) => events.push(event));
    socket.send({ type: "response.create", model: upstream.model, input: "First turn", store: false } as never);
    await expect.poll(() => completed().length, { timeout: 10_000 }).toBe(1);
    const firstId = completed()[0].response.id;
    socket.send({
      type: "response.create",
      model: upstream.model,
      input: "Second turn",
      previous_response_id: firstId,
      store: false,
    } as never);
    await expect.poll(() => completed().length, { timeout: 10_000 }).toBe(2);
    socket.close();
    // Every frame is one of OpenAI's Responses stream events; the second turn continued the first (store: false).
    for (const event of events) assertOpenAISchema("ResponseStreamEvent", event);
    expect(completed()[1].response.previous_response_id).toBe(firstId);
    const mock = upstream.name === "openai" ? openaiMock : anthropicMock;
    expect(mock.requests.at(-1)!.body.toString()).toContain("First turn");
  });

  it.each(["http", "websocket"] as const)("the Agents SDK with a function tool over %s", async (transport) => {
    const client = new OpenAI({
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: headersFor(upstream),
    });
    const model =
      transport === "http"
        ? new OpenAIResponsesModel(client, upstream.model)
        : new OpenAIResponsesWSModel(client, upstream.model);
    let called = 0;
    const getWeather = agentTool({
      name: "city_weather",
      description: "The weather in a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        called += 1;
        return `${city}: 21 degrees`;
      },
    });
    // The mocks call a tool whenever one is offered: the run stops at the tool's answer.
    const agent = new Agent({
      name: "weather",
      instructions: "Answer briefly.",
      model,
      tools: [getWeather],
      toolUseBehavior: "stop_on_first_tool",
    });
    const result = await new Runner({ tracingDisabled: true }).run(agent, "Weather in Paris?");
    expect(called).toBeGreaterThanOrEqual(1);
    expect(String(result.finalOutput)).toContain("21 degrees");
    if (model instanceof OpenAIResponsesWSModel) await model.close();
  });
});
