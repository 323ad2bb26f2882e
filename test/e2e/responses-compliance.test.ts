import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedVersion, recordConformance } from "../helpers/conformance-page.ts";
import { type CheckResult, type ExpectedFailure, tallyChecks } from "../helpers/expected-failures.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { openAISchemaErrors } from "../helpers/openai-schema.ts";
import { startAnthropicMock } from "../mocks/anthropic.ts";
import { startBedrockMock } from "../mocks/bedrock.ts";
import { startGoogleMock } from "../mocks/google.ts";
import { startOpenAIMock } from "../mocks/openai.ts";

/**
 * The Responses API's compliance cases, after the Open Responses compliance tests (basic, streaming, system
 * prompt, tool calling, image input, multi-turn) plus the function-call round trip and a previous_response_id
 * chain, on every provider family: natively on OpenAI, translated on Anthropic, Gemini and Bedrock (mock
 * upstreams speaking each provider's wire format). Each case checks the answer against OpenAI's published
 * Response schema (and each stream event against its event schema) and what the case is about (status, output
 * items). The counts go to docs/conformance.md; failures must be listed with a reason below.
 */

const SUITE = "Responses (after the Open Responses compliance tests)";
/** Known failures (`case@provider`), each with its reason. None today: a case that fails is a defect. */
const EXPECTED_FAILURES: ExpectedFailure[] = [];

let gateway: TestGateway;
const mocks: MockServer[] = [];
let targets: Array<{ name: string; model: string; client: OpenAI }>;

const weather: OpenAI.Responses.FunctionTool = {
  type: "function",
  name: "get_weather",
  description: "Get the current weather for a location",
  parameters: {
    type: "object",
    properties: { location: { type: "string", description: "The city and state, e.g. San Francisco, CA" } },
    required: ["location"],
  },
  strict: false,
};
/** A 1x1 PNG, as a data URL (image input without a network fetch). */
const PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

type Case = (client: OpenAI, model: string) => Promise<string[]>;

/** The schema problems of a Response, plus what a completed one must have. */
function completed(response: OpenAI.Responses.Response): string[] {
  const errors = openAISchemaErrors("Response", response);
  if (response.status !== "completed") errors.push(`status is ${response.status}, not completed`);
  if (!response.output?.length) errors.push("the response has no output items");
  return errors;
}

const hasItem = (response: OpenAI.Responses.Response, type: string) =>
  response.output.some((item) => item.type === type) ? [] : [`no output item of type ${type}`];

const CASES: Record<string, Case> = {
  "basic-response": async (client, model) =>
    completed(
      await client.responses.create({
        model,
        input: [{ type: "message", role: "user", content: "Say hello in exactly 3 words." }],
      }),
    ),
  "streaming-response": async (client, model) => {
    const stream = await client.responses.create({
      model,
      input: [{ type: "message", role: "user", content: "Count from 1 to 5." }],
      stream: true,
    });
    const errors: string[] = [];
    const types: string[] = [];
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      types.push(event.type);
      errors.push(...openAISchemaErrors("ResponseStreamEvent", event).map((error) => `${event.type}: ${error}`));
      if (event.type === "response.completed") final = event.response;
    }
    if (types[0] !== "response.created") errors.push(`the stream starts with ${types[0]}`);
    if (!types.includes("response.output_text.delta")) errors.push("no response.output_text.delta event");
    if (!final) errors.push("no response.completed event");
    else errors.push(...completed(final));
    return errors;
  },
  "system-prompt": async (client, model) =>
    completed(
      await client.responses.create({
        model,
        input: [
          { type: "message", role: "system", content: "You are a pirate. Always respond in pirate speak." },
          { type: "message", role: "user", content: "Say hello." },
        ],
      }),
    ),
  "tool-calling": async (client, model) => {
    const response = await client.responses.create({
      model,
      input: [{ type: "message", role: "user", content: "What's the weather like in San Francisco?" }],
      tools: [weather],
    });
    return [...openAISchemaErrors("Response", response), ...hasItem(response, "function_call")];
  },
  "function-call-round-trip": async (client, model) => {
    const call = await client.responses.create({
      model,
      input: [{ type: "message", role: "user", content: "What's the weather like in San Francisco?" }],
      tools: [weather],
    });
    const fc = call.output.find((item) => item.type === "function_call") as
      | OpenAI.Responses.ResponseFunctionToolCall
      | undefined;
    if (!fc) return ["no function_call to answer"];
    const after = await client.responses.create({
      model,
      previous_response_id: call.id,
      input: [{ type: "function_call_output", call_id: fc.call_id, output: '{"temperature": 18}' }],
      tools: [weather],
      tool_choice: "none",
    });
    return [...completed(after), ...hasItem(after, "message")];
  },
  "image-input": async (client, model) =>
    completed(
      await client.responses.create({
        model,
        input: [
          {
            type: "message",
            role: "user",
            content: [
              { type: "input_text", text: "What do you see in this image? Answer in one sentence." },
              { type: "input_image", image_url: PIXEL, detail: "auto" },
            ],
          },
        ],
      }),
    ),
  "multi-turn": async (client, model) =>
    completed(
      await client.responses.create({
        model,
        input: [
          { type: "message", role: "user", content: "My name is Alice." },
          { type: "message", role: "assistant", content: "Hello Alice! How can I help you today?" },
          { type: "message", role: "user", content: "What is my name?" },
        ],
      }),
    ),
  "previous-response-id": async (client, model) => {
    const first = await client.responses.create({ model, input: "My name is Alice." });
    const second = await client.responses.create({ model, input: "What is my name?", previous_response_id: first.id });
    const errors = completed(second);
    if (second.previous_response_id !== first.id) errors.push("previous_response_id is not echoed");
    return errors;
  },
};

beforeAll(async () => {
  gateway = await startTestGateway();
  const openai = await startOpenAIMock({
    reply: "Hello there friend.",
    toolArguments: { location: "San Francisco, CA" },
  });
  const anthropic = await startAnthropicMock({ delayMs: 1 });
  const google = await startGoogleMock({ apiKey: "provider-key", streamDelayMs: 1 });
  const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
  const bedrock = await startBedrockMock({ credentials });
  mocks.push(openai, anthropic, google, bedrock);
  const client = (headers: Record<string, string>) =>
    new OpenAI({
      apiKey: "provider-key",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
      maxRetries: 0,
    });
  targets = [
    {
      name: "openai (native)",
      model: "gpt-4o-mini",
      client: client({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` }),
    },
    {
      name: "anthropic (translated)",
      model: "claude-3-5-sonnet-20241022",
      client: client({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropic.url }),
    },
    {
      name: "google (translated)",
      model: "gemini-2.0-flash",
      client: client({ "x-gateway-provider": "google", "x-gateway-custom-host": google.url }),
    },
    {
      name: "bedrock (translated)",
      model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
      client: client({
        "x-gateway-provider": "bedrock",
        "x-gateway-custom-host": bedrock.url,
        "x-gateway-aws-access-key-id": credentials.accessKeyId,
        "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
        "x-gateway-aws-region": "us-east-1",
      }),
    },
  ];
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(mocks.map((mock) => mock.close()));
});

describe("Responses compliance on every provider", () => {
  it("passes every case on every provider, but for its explained failures", { timeout: 120_000 }, async () => {
    const checks: CheckResult[] = [];
    for (const target of targets) {
      for (const [name, run] of Object.entries(CASES)) {
        const errors = await run(target.client, target.model).catch((error: Error) => [error.message]);
        checks.push({ id: `${name}@${target.name}`, errors });
      }
    }
    const { passed, failures, expected, stale } = tallyChecks(checks, EXPECTED_FAILURES);
    expect(failures).toEqual([]);
    expect(stale, "expected failures that now pass: narrow or remove them").toEqual([]);
    const measured = {
      version: `openai ${installedVersion("openai")}`,
      passed,
      failed: failures.length,
      expectedFailures: expected.length,
    };
    const committed = recordConformance({ suite: SUITE, requirements: "every provider", ...measured });
    expect(committed, "docs/conformance.md was regenerated with these counts: commit it").toEqual(measured);
  });
});
