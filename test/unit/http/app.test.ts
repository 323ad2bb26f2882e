import { describe, expect, it } from "vitest";
import { z } from "zod";
import { createApp } from "../../../core/http/app.ts";
import type { HandlerMap } from "../../../core/http/context.ts";
import { json, readBody } from "../../../core/http/json.ts";
import type { RouteFamily } from "../../../core/routes/table.ts";
import type { Services } from "../../../core/services.ts";
import { StoreUnavailableError } from "../../../core/store/ports.ts";
import { sseEvents } from "../../helpers/sse-events.ts";

const families: RouteFamily[] = [
  {
    name: "demo",
    dataPlane: false,
    timeoutSeconds: 10,
    routes: [
      { method: "POST", path: "/v1/echo", handler: "echo", auth: "none" },
      { method: "GET", path: "/v1/things/:id", handler: "thing", auth: "none" },
      { method: "GET", path: "/v1/boom", handler: "boom", auth: "none" },
      { method: "GET", path: "/v1/store-down", handler: "storeDown", auth: "none" },
      { method: "GET", path: "/v1/events", handler: "events", auth: "none" },
      { method: "GET", path: "/v1/secret", handler: "echo", auth: "api_key" },
    ],
  },
];

const handlers: HandlerMap = {
  async echo(request) {
    const body = await readBody(request, z.object({ name: z.string(), count: z.number().int().max(3).optional() }), 64);
    return json(body);
  },
  async thing(_request, ctx) {
    return json({ id: ctx.params.id, trace: ctx.traceId });
  },
  async boom() {
    throw new Error("secret internals at /srv/app.ts:12");
  },
  async storeDown() {
    throw new StoreUnavailableError("ECONNREFUSED");
  },
  async events() {
    async function* source() {
      yield { n: 1 };
      yield { n: 2 };
    }
    return sseEvents(source());
  },
};

const services = {
  apiKeys: { authenticate: async () => Promise.reject(new Error("not reached")) },
} as unknown as Services;

const app = createApp({ families, handlers: { demo: handlers }, services });
const call = (path: string, init?: RequestInit) =>
  app(new Request(`http://gateway.test${path}`, init), { waitUntil: () => {} });

describe("http app", () => {
  it("routes with params and sets a trace id (given or generated)", async () => {
    const given = await call("/v1/things/42", { headers: { "x-gateway-trace-id": "trace-abc" } });
    expect(await given.json()).toEqual({ id: "42", trace: "trace-abc" });
    expect(given.headers.get("x-gateway-trace-id")).toBe("trace-abc");
    const generated = await call("/v1/things/7", { headers: { "x-portkey-trace-id": "bad value with spaces" } });
    expect(generated.headers.get("x-gateway-trace-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 404 for unknown routes and 405 with Allow for wrong methods", async () => {
    const missing = await call("/v1/nope");
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatchObject({ code: "unknown_url", type: "invalid_request_error" });
    const wrong = await call("/v1/things/1", { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET");
    expect(wrong.headers.get("x-gateway-trace-id")).toBeTruthy();
  });

  it("400 for malformed JSON and schema violations naming the param, 415 for other content types, 413 over the limit", async () => {
    const post = (body: string, type = "application/json") =>
      call("/v1/echo", { method: "POST", body, headers: { "content-type": type } });
    const malformed = await post("{nope");
    expect(malformed.status).toBe(400);
    expect((await malformed.json()).error.code).toBe("invalid_json");
    const invalid = await post(JSON.stringify({ name: "a", count: 9 }));
    expect(invalid.status).toBe(400);
    expect((await invalid.json()).error).toMatchObject({ param: "count", type: "invalid_request_error" });
    expect((await post("name=a", "application/x-www-form-urlencoded")).status).toBe(415);
    const large = await post(JSON.stringify({ name: "x".repeat(100) }));
    expect(large.status).toBe(413);
    expect((await large.json()).error.code).toBe("request_too_large");
  });

  it("500 without internals, 503 retryable for store faults", async () => {
    const boom = await call("/v1/boom");
    expect(boom.status).toBe(500);
    const text = await boom.text();
    expect(text).not.toContain("secret internals");
    expect(JSON.parse(text).error.type).toBe("server_error");
    const down = await call("/v1/store-down");
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("1");
  });

  it("401 in the OpenAI shape without an API key", async () => {
    const response = await call("/v1/secret");
    expect(response.status).toBe(401);
    expect((await response.json()).error).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
  });

  it("writes SSE events and a final [DONE]", async () => {
    const response = await call("/v1/events");
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(await response.text()).toBe('data: {"n":1}\n\ndata: {"n":2}\n\ndata: [DONE]\n\n');
  });
});
