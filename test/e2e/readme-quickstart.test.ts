import OpenAI from "openai";
import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * The README's first requests, as a newcomer types them (curl, the openai SDK, the portkey-ai SDK, a saved
 * integration), against the real gateway. The only addition is a custom host pointing each provider at its mock.
 */

let gateway: TestGateway;
let openai: OpenAIMock;
let anthropic: AnthropicMock;

beforeAll(async () => {
  [gateway, openai, anthropic] = await Promise.all([startTestGateway(), startOpenAIMock(), startAnthropicMock()]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), openai?.close(), anthropic?.close()]);
});

describe("README quick start", () => {
  it("the curl example answers a chat completion with the provider key passed through", async () => {
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${openai.url}/v1`,
        Authorization: "Bearer sk-openai-test",
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hello" }] }),
    });
    expect(response.status).toBe(200);
    expect((await response.json()).choices[0].message.content).toEqual(expect.any(String));
    expect(openai.lastRequest()?.headers.authorization).toBe("Bearer sk-openai-test");
  });

  it("the openai SDK example reaches Anthropic and answers in OpenAI's shape", async () => {
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: "sk-ant-test",
      defaultHeaders: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "anthropic",
        "x-gateway-custom-host": anthropic.url,
      },
    });
    const answer = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]!.message.content).toEqual(expect.any(String));
    expect(anthropic.requests.at(-1)?.headers["x-api-key"]).toBe("sk-ant-test");
  });

  it("the portkey-ai SDK example answers through its x-portkey-* headers", async () => {
    const portkey = new Portkey({
      baseURL: `${gateway.url}/v1`,
      apiKey: gateway.adminKey,
      provider: "openai",
      Authorization: "Bearer sk-openai-portkey",
      customHost: `${openai.url}/v1`,
    });
    const answer = await portkey.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.choices?.[0]?.message?.content).toEqual(expect.any(String));
    expect(openai.lastRequest()?.headers.authorization).toBe("Bearer sk-openai-portkey");
  });

  it("a saved integration is used by slug, with no provider key on the request", async () => {
    const saved = await fetch(`${gateway.url}/v1/integrations`, {
      method: "POST",
      headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
      body: JSON.stringify({
        ai_provider_id: "openai",
        slug: "openai-prod",
        name: "OpenAI",
        key: "sk-saved",
        configurations: { custom_host: `${openai.url}/v1` },
      }),
    });
    expect(saved.status).toBe(201);
    const client = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: "unused",
      defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-provider": "@openai-prod" },
    });
    const answer = await client.chat.completions.create({
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.choices[0]!.message.content).toEqual(expect.any(String));
    expect(openai.lastRequest()?.headers.authorization).toBe("Bearer sk-saved");
  });
});
