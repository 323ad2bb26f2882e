/**
 * One handler test, two platforms: the same app (the real chat pipeline against a mock provider, and a handler
 * that reads request headers) answers through the local server (node:http) and through the Lambda function URL
 * adapter (the runtime stand-in), and the answers must be the same, byte for byte, JSON and streams alike.
 * Whatever fast path either platform takes at its edge must not change what the client gets.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp, type FetchHandler } from "../../core/http/app.ts";
import type { HandlerMap } from "../../core/http/context.ts";
import { json } from "../../core/http/json.ts";
import { createFunctionUrlHandler, type StreamingLambdaHandler } from "../../core/platform/aws/function-url-handler.ts";
import { type RunningServer, startServer } from "../../core/platform/local/server.ts";
import { handlers as chatHandlers } from "../../core/routes/handlers/chat.ts";
import type { RouteFamily } from "../../core/routes/table.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { installAwsLambdaGlobal, invoke } from "./awslambda-runtime.ts";
import { functionUrlEvent, storelessServices } from "./fake-app.ts";

installAwsLambdaGlobal();

const family: RouteFamily = {
  name: "both",
  dataPlane: true,
  timeoutSeconds: 10,
  routes: [
    { method: "POST", path: "/v1/chat/completions", handler: "chatCompletions", auth: "none", body: "json" },
    { method: "GET", path: "/v1/headers", handler: "headers", auth: "none" },
  ],
};

const handlers: HandlerMap = {
  ...chatHandlers,
  /** What a handler reads from `request.headers`, whichever platform built the Request. */
  async headers(request) {
    const headers = request.headers;
    return json({
      team: headers.get("X-Team"),
      hasTeam: headers.has("x-TEAM"),
      // Names only inherited by a plain object must find nothing (clients choose forwarded names).
      inherited: ["constructor", "toString", "hasOwnProperty"].map((name) => headers.get(name)),
      custom: [...headers].filter(([name]) => name.startsWith("x-")).sort(),
    });
  },
};

interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  body: string;
}

/** The headers both platforms must agree on (others, such as date or connection, belong to the transport). */
const COMPARED_HEADERS = [
  "content-type",
  "cache-control",
  "x-gateway-trace-id",
  "x-gateway-provider",
  "x-gateway-retry-attempt-count",
  "x-gateway-last-used-option-index",
];

let upstream: OpenAIMock;
let app: FetchHandler;
let local: RunningServer;
let lambda: StreamingLambdaHandler;

beforeAll(async () => {
  upstream = await startOpenAIMock();
  app = createApp({
    families: [family],
    handlers: { both: handlers },
    services: storelessServices({ TRUSTED_CUSTOM_HOSTS: "127.0.0.1" }),
  });
  local = await startServer(app, { port: 0, host: "127.0.0.1", pending: new Set() });
  lambda = createFunctionUrlHandler(async () => app);
});

afterAll(async () => {
  await local?.close(100);
  await upstream?.close();
});

async function throughLocalServer(method: string, path: string, headers: Record<string, string>, body?: string) {
  const response = await fetch(`${local.url}${path}`, { method, headers, body });
  return {
    status: response.status,
    headers: Object.fromEntries(COMPARED_HEADERS.map((name) => [name, response.headers.get(name) ?? undefined])),
    body: await response.text(),
  };
}

async function throughLambda(method: string, path: string, headers: Record<string, string>, body?: string) {
  const lowerCased = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  const result = await invoke(lambda, functionUrlEvent(method, path, { headers: lowerCased, body }));
  return {
    status: result.prelude.statusCode,
    headers: Object.fromEntries(COMPARED_HEADERS.map((name) => [name, result.prelude.headers[name]])),
    body: result.body.toString("utf8"),
  };
}

/** The answer both platforms give; fails if they differ. */
async function onBoth(method: string, path: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const viaLocal = await throughLocalServer(method, path, headers, text);
  const viaLambda = await throughLambda(method, path, headers, text);
  expect(viaLambda).toEqual(viaLocal);
  return viaLocal;
}

const chatHeaders = () => ({
  "content-type": "application/json",
  "x-gateway-provider": "openai",
  "x-gateway-custom-host": `${upstream.url}/v1`,
  authorization: "Bearer sk-test",
  "x-gateway-trace-id": "trace-both",
  "x-team": "blue",
});

describe("the same answers through the local server and the Lambda adapter", () => {
  it("a JSON chat completion", async () => {
    const answer = await onBoth("POST", "/v1/chat/completions", chatHeaders(), {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({
      "content-type": "application/json",
      "x-gateway-provider": "openai",
      "x-gateway-trace-id": "trace-both",
    });
    expect(JSON.parse(answer.body).choices[0].message.content).toBe("Hello from the mock upstream.");
  });

  it("a streamed chat completion, event for event", async () => {
    const answer = await onBoth("POST", "/v1/chat/completions", chatHeaders(), {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
    });
    expect(answer.status).toBe(200);
    expect(answer.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(answer.headers["x-gateway-trace-id"]).toBe("trace-both");
    const events = answer.body.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const text = events
      .slice(0, -1)
      .map((event) => JSON.parse(event.slice("data: ".length)).choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe("Hello from the mock upstream.");
  });

  it("a provider error, in OpenAI's shape", async () => {
    upstream.setFault({ status: 429, times: 2 });
    const answer = await onBoth("POST", "/v1/chat/completions", chatHeaders(), {
      model: "gpt-4o-mini",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body).error).toMatchObject({ message: expect.any(String) });
  });

  it("forwards named headers, and ignores a name no header can have (not a 500 on either platform)", async () => {
    upstream.reset();
    const answer = await onBoth(
      "POST",
      "/v1/chat/completions",
      { ...chatHeaders(), "x-gateway-forward-headers": "x-team, bad name, x(y)" },
      { model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] },
    );
    expect(answer.status).toBe(200);
    expect(upstream.requests).toHaveLength(2);
    for (const sent of upstream.requests) expect(sent.headers["x-team"]).toBe("blue");
  });

  it("request headers as a handler reads them", async () => {
    const answer = await onBoth("GET", "/v1/headers", { "X-Team": "blue", "x-gateway-trace-id": "trace-h" });
    expect(JSON.parse(answer.body)).toEqual({
      team: "blue",
      hasTeam: true,
      inherited: [null, null, null],
      custom: [
        ["x-gateway-trace-id", "trace-h"],
        ["x-team", "blue"],
      ],
    });
  });
});
