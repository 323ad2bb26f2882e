import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultUpstream, startFaultUpstream } from "../helpers/fault-upstream.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";

/** Generic pass-through (spec 4.7): /v1/{provider-endpoint} and /v1/proxy/{...}, raw both ways, configs applied. */

let gateway: TestGateway;
let provider: MockServer;
let faults: FaultUpstream;

beforeAll(async () => {
  provider = await startMockServer(async (req, res) => {
    if (req.path.startsWith("/v1/containers")) {
      res.writeHead(201, {
        "content-type": "application/json",
        "x-provider-header": "kept",
        "openai-processing-ms": "7",
      });
      return void res.end(
        JSON.stringify({ id: "asst_1", path: req.path, method: req.method, echo: req.body.toString("utf8") }),
      );
    }
    if (req.path === "/v1/teapot") {
      res.writeHead(418, { "content-type": "text/plain", "x-provider-header": "teapot" });
      return void res.end("I am a teapot");
    }
    if (req.path === "/v1/events") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const part of ["event: custom\ndata: one\n\n", ": comment\n\n", "data: two\n\n"]) {
        res.write(part);
        await new Promise((resolve) => setTimeout(resolve, 30));
      }
      return void res.end();
    }
    if (req.path === "/v1/redirect") {
      res.writeHead(307, { location: "http://169.254.169.254/" });
      return void res.end();
    }
    if (req.path === "/v1/chat/completions") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end(JSON.stringify({ raw: true, echo: req.json() }));
    }
    res.writeHead(404, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: `no route ${req.path}` } }));
  });
  faults = await startFaultUpstream();
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await provider?.close();
  await faults?.close();
});

const headers = (extra: Record<string, string> = {}) => ({
  "x-gateway-api-key": gateway.adminKey,
  "x-gateway-provider": "openai",
  "x-gateway-custom-host": `${provider.url}/v1`,
  authorization: "Bearer sk-provider",
  ...extra,
});

describe("pass-through", () => {
  it("forwards path, query, body and auth unchanged and returns the provider's answer unchanged", async () => {
    const body = '{"name":"helper",  "tools":[]}';
    const response = await fetch(`${gateway.url}/v1/containers/asst_1/files?limit=2&order=desc`, {
      method: "POST",
      headers: headers({
        "content-type": "application/json",
        "openai-beta": "assistants=v2",
        "x-gateway-metadata": '{"team":"a"}',
      }),
      body,
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("x-provider-header")).toBe("kept");
    expect(response.headers.get("x-gateway-provider")).toBe("openai");
    expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config");
    expect(await response.json()).toEqual({
      id: "asst_1",
      path: "/v1/containers/asst_1/files?limit=2&order=desc",
      method: "POST",
      echo: body,
    });
    const sent = provider.requests.at(-1)!;
    expect(sent.headers.authorization).toBe("Bearer sk-provider");
    expect(sent.headers["openai-beta"]).toBe("assistants=v2");
    expect(sent.headers["x-gateway-api-key"]).toBeUndefined();
    expect(sent.headers["x-gateway-metadata"]).toBeUndefined();
  });

  it("supports GET, PUT and DELETE", async () => {
    for (const method of ["GET", "PUT", "DELETE"]) {
      const response = await fetch(`${gateway.url}/v1/containers/asst_9`, {
        method,
        headers: headers(),
        body: method === "PUT" ? "x" : undefined,
      });
      expect(response.status, method).toBe(201);
      expect((await response.json()).method).toBe(method);
    }
  });

  it("returns provider errors raw, with their status and headers", async () => {
    const response = await fetch(`${gateway.url}/v1/teapot`, { headers: headers() });
    expect(response.status).toBe(418);
    expect(response.headers.get("x-provider-header")).toBe("teapot");
    expect(await response.text()).toBe("I am a teapot");
  });

  it("streams raw events as they arrive", async () => {
    const response = await fetch(`${gateway.url}/v1/events`, { headers: headers() });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: number[] = [];
    let text = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push(Date.now());
      text += decoder.decode(value, { stream: true });
    }
    expect(text).toBe("event: custom\ndata: one\n\n: comment\n\ndata: two\n\n");
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(40);
  });

  it("/v1/proxy forces raw pass-through on a path with dedicated handling", async () => {
    const response = await fetch(`${gateway.url}/v1/proxy/chat/completions`, {
      method: "POST",
      headers: headers({ "content-type": "application/json" }),
      body: JSON.stringify({ model: "m", messages: [], stream: false, anything: 1 }),
    });
    expect(await response.json()).toEqual({
      raw: true,
      echo: { model: "m", messages: [], stream: false, anything: 1 },
    });
  });

  it("keeps every dedicated route working, and the openai client too", async () => {
    const client = new OpenAI({
      apiKey: "sk-provider",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: headers(),
      maxRetries: 0,
      timeout: 10_000,
    });
    const models = await new OpenAI({
      apiKey: "x",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": gateway.adminKey },
      maxRetries: 0,
    }).models.list();
    expect(models.data.length).toBeGreaterThan(100);
    const health = await fetch(`${gateway.url}/v1/health`);
    expect(await health.json()).toEqual({ status: "ok" });
    // The client's own raw request method reaches a provider endpoint the gateway has no handler for.
    const created = (await client.post("/containers", { body: { name: "x" } })) as { id: string };
    expect(created.id).toBe("asst_1");
  });

  it("answers 404 unknown_url (or 405) without a provider, and 401 without a key", async () => {
    const unknown = await fetch(`${gateway.url}/v1/nowhere`, { headers: { "x-gateway-api-key": gateway.adminKey } });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: "unknown_url", type: "invalid_request_error" });
    const wrongMethod = await fetch(`${gateway.url}/v1/models`, {
      method: "DELETE",
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET");
    const patch = await fetch(`${gateway.url}/v1/nowhere`, {
      method: "PATCH",
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(patch.status).toBe(405);
    const anonymous = await fetch(`${gateway.url}/v1/containers`, { headers: { "x-gateway-provider": "openai" } });
    expect(anonymous.status).toBe(401);
    const proxyWithout = await fetch(`${gateway.url}/v1/proxy/containers`, {
      headers: { "x-gateway-api-key": gateway.adminKey },
    });
    expect(proxyWithout.status).toBe(400);
    expect((await proxyWithout.json()).error).toMatchObject({ code: "missing_provider" });
    const outside = await fetch(`${gateway.url}/nowhere`, { headers: { "x-gateway-api-key": gateway.adminKey } });
    expect(outside.status).toBe(404);
  });

  it("applies configs: fallback, retries and params on JSON bodies", async () => {
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        { provider: "openai", custom_host: faults.host("500") },
        { provider: "openai", custom_host: faults.host("reset") },
        {
          provider: "openai",
          custom_host: faults.host("flaky-pt-1"),
          retry: { attempts: 2 },
          override_params: { model: "forced" },
        },
      ],
    };
    const response = await fetch(`${gateway.url}/v1/proxy/chat/completions`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-config": JSON.stringify(config),
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "asked", messages: [] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[2]");
    expect(response.headers.get("x-gateway-retry-attempt-count")).toBe("1");
    expect((await response.json()).model).toBe("forced");
  });

  it("answers the last provider error raw when a config runs out of targets", async () => {
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        { provider: "openai", custom_host: faults.host("503") },
        { provider: "openai", custom_host: `${provider.url}/v1` },
      ],
    };
    const response = await fetch(`${gateway.url}/v1/teapot`, {
      headers: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config) },
    });
    expect(response.status).toBe(418);
    expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
    expect(await response.text()).toBe("I am a teapot");
  });

  it("rejects private custom hosts and never follows redirects", async () => {
    for (const host of [
      "http://10.0.0.1/v1",
      "http://169.254.169.254/",
      "http://[::ffff:10.0.0.1]/",
      "file:///etc/passwd",
      "http://metadata.google.internal/",
    ]) {
      const response = await fetch(`${gateway.url}/v1/proxy/anything`, {
        headers: headers({ "x-gateway-custom-host": host }),
      });
      expect(response.status, host).toBe(400);
      expect((await response.json()).error.code, host).toBe("invalid_custom_host");
    }
    const redirected = await fetch(`${gateway.url}/v1/redirect`, { headers: headers() });
    expect(redirected.status).toBe(502);
    expect((await redirected.json()).error).toMatchObject({ code: "upstream_redirect" });
  });
});
