import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { configStore } from "../../../../core/control/saved-resources.ts";
import { checkEnvironment } from "../../../../core/inference/guardrails/check-environment.ts";
import { MAX_ANSWER_BYTES } from "../../../../core/inference/guardrails/outbound-json.ts";
import type { RequestContext, Services } from "../../../../core/services.ts";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import { adminPrincipal, unique } from "../../../helpers/control-services.ts";
import { type TestGateway, startTestGateway } from "../../../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer } from "../../../helpers/mock-server.ts";
import { type OpenAIMock, startOpenAIMock } from "../../../mocks/openai.ts";

/**
 * What checks reach beyond their input, against real servers on 127.0.0.1: webhooks and JWKS under the SSRF
 * rules (loopback reached only when TRUSTED_CUSTOM_HOSTS admits it), with the check's own headers only and
 * bounded answers; and the gateway's own pipeline as a logged sub-request (a mock OpenAI as the judge).
 */

let gateway: TestGateway;
let hook: MockServer;
let openai: OpenAIMock;

beforeAll(async () => {
  gateway = await startTestGateway();
  hook = await startMockServer((_request, response) => sendJson(response, 200, { verdict: true }));
  openai = await startOpenAIMock({
    reply: '{"verdict": false, "reason": "off topic"}',
    guard: (request) =>
      request.path.endsWith("/moderations")
        ? { status: 200, body: { id: "modr-1", model: "omni-moderation-latest", results: [{ flagged: true }] } }
        : undefined,
  });
});

afterAll(async () => {
  await Promise.all([gateway?.close(), hook?.close(), openai?.close()]);
});

afterEach(() => {
  hook.requests.length = 0;
  openai.reset();
  hook.handle((_request, response) => sendJson(response, 200, { verdict: true }));
});

/** The guarded request: a client's chat call carrying its own credentials and cookies. */
const clientRequest = () =>
  new Request(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-gateway-api-key": "gw-client-key-should-not-travel",
      authorization: "Bearer sk-client-provider-key",
      cookie: "session=abc",
      "x-client-note": "private",
    },
    body: "{}",
  });

function context(services: Services = gateway.gateway.services, waitUntil = (_work: Promise<unknown>) => {}) {
  const ctx: RequestContext = {
    traceId: "trace-check-env",
    path: "/v1/chat/completions",
    params: {},
    principal: adminPrincipal(gateway.gateway.bootstrap.organisationId),
    services,
    signal: new AbortController().signal,
    waitUntil,
    startedAt: performance.now(),
  };
  return ctx;
}

const never = () => new AbortController().signal;

describe("postJson / getJson", () => {
  it("POSTs JSON to a trusted loopback webhook with the check's own headers (its own token included), never the request's", async () => {
    hook.handle((_request, response) => sendJson(response, 200, { verdict: false, reason: "policy" }));
    const env = checkEnvironment(clientRequest(), context());
    const answer = await env.postJson(
      `${hook.url}/hooks/guard?team=a`,
      { text: "hello" },
      {
        headers: {
          "X-Team": "search",
          Authorization: "Bearer hook-secret",
          "x-api-key": "k",
          "x-webhook-token": "t",
          "Content-Length": "1",
        },
        timeoutMs: 2_000,
        signal: never(),
      },
    );
    expect(answer).toEqual({ status: 200, json: { verdict: false, reason: "policy" } });
    const sent = hook.requests[0]!;
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe("/hooks/guard?team=a");
    expect(sent.json()).toEqual({ text: "hello" });
    expect(sent.headers["x-team"]).toBe("search");
    expect(sent.headers.authorization).toBe("Bearer hook-secret");
    expect(sent.headers["x-webhook-token"]).toBe("t");
    expect(sent.headers["content-type"]).toBe("application/json");
    for (const name of ["cookie", "x-gateway-api-key", "x-client-note"])
      expect(sent.headers[name], name).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain("sk-client-provider-key");
  });

  it("GETs JSON (a JWKS), and answers non-JSON bodies with json undefined and their status", async () => {
    hook.handle((_request, response) => sendJson(response, 200, { keys: [{ kty: "RSA", kid: "k1" }] }));
    const env = checkEnvironment(clientRequest(), context());
    expect(await env.getJson(`${hook.url}/.well-known/jwks.json`, { timeoutMs: 2_000, signal: never() })).toEqual({
      status: 200,
      json: { keys: [{ kty: "RSA", kid: "k1" }] },
    });
    expect(hook.requests[0]!.method).toBe("GET");
    hook.handle((_request, response) => {
      response.writeHead(503, { "content-type": "text/html" });
      response.end("<html>down</html>");
    });
    expect(await env.postJson(hook.url, {}, { timeoutMs: 2_000, signal: never() })).toEqual({
      status: 503,
      json: undefined,
    });
  });

  it("refuses private addresses and internal names when they are not trusted", async () => {
    const untrusted = { ...gateway.gateway.services, trustedHosts: parseTrustedHosts([]) } as Services;
    const env = checkEnvironment(clientRequest(), context(untrusted));
    for (const url of [
      hook.url,
      "http://localhost:9/x",
      "http://169.254.169.254/latest/meta-data",
      "http://[::1]:9/",
    ]) {
      await expect(env.postJson(url, {}, { timeoutMs: 1_000, signal: never() }), url).rejects.toThrow(/refused/);
    }
    await expect(env.getJson("file:///etc/passwd", { timeoutMs: 1_000, signal: never() })).rejects.toThrow(/refused/);
    await expect(env.getJson("https://user:pw@example.com/", { timeoutMs: 1_000, signal: never() })).rejects.toThrow(
      /refused/,
    );
    expect(hook.requests).toHaveLength(0);
  });

  it("refuses an answer over the size bound, a redirect, and an answer slower than the time limit", async () => {
    const env = checkEnvironment(clientRequest(), context());
    hook.handle((_request, response) => {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(`{"pad": "${"x".repeat(MAX_ANSWER_BYTES)}"}`);
    });
    await expect(env.postJson(hook.url, {}, { timeoutMs: 5_000, signal: never() })).rejects.toThrow(/larger than/);

    hook.handle((_request, response) => {
      response.writeHead(302, { location: "http://169.254.169.254/" });
      response.end();
    });
    await expect(env.postJson(hook.url, {}, { timeoutMs: 2_000, signal: never() })).rejects.toThrow(/redirect/);

    hook.handle(async (_request, response) => {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      sendJson(response, 200, { verdict: true });
    });
    const started = performance.now();
    await expect(
      env.postJson(`${hook.url}/slow?token=s3cret`, {}, { timeoutMs: 100, signal: never() }),
    ).rejects.toThrow(/timed out after 100 ms/);
    expect(performance.now() - started).toBeLessThan(900);
    // Errors name the origin, never the path or query (which may carry a token).
    await expect(
      env.postJson(`${hook.url}/slow?token=s3cret`, {}, { timeoutMs: 100, signal: never() }),
    ).rejects.toThrow(expect.objectContaining({ message: expect.not.stringContaining("s3cret") }));
  });

  it("refuses malformed headers", async () => {
    const env = checkEnvironment(clientRequest(), context());
    await expect(
      env.postJson(hook.url, {}, { headers: { "bad name": "x" }, timeoutMs: 1_000, signal: never() }),
    ).rejects.toThrow(/invalid header name/);
    await expect(
      env.postJson(hook.url, {}, { headers: { "x-ok": "a\r\nx-injected: 1" }, timeoutMs: 1_000, signal: never() }),
    ).rejects.toThrow(/invalid value/);
  });
});

describe("infer: the gateway's own pipeline as a sub-request", () => {
  const judgeConfig = () => ({ provider: "openai", custom_host: `${openai.url}/v1`, api_key: "sk-judge-key" });
  const judgeBody = { model: "gpt-4o-mini", messages: [{ role: "user", content: "Is this on topic?" }], stream: true };

  /** Runs `work` with the request's waitUntil collected, then waits for the logs it wrote. */
  async function withLogs<T>(work: (ctx: RequestContext) => Promise<T>): Promise<{ result: T; logs: RequestLog[] }> {
    const pending: Promise<unknown>[] = [];
    const services = gateway.gateway.services;
    const write = vi.spyOn(services.logger, "write");
    try {
      const result = await work(context(services, (promise) => pending.push(promise)));
      await Promise.all(pending);
      return { result, logs: write.mock.calls.map((call) => call[0] as RequestLog) };
    } finally {
      write.mockRestore();
    }
  }

  it("calls chat through an inline config, answers the JSON, and logs the call with its usage", async () => {
    const { result, logs } = await withLogs((ctx) =>
      checkEnvironment(clientRequest(), ctx).infer("chat", judgeBody, judgeConfig(), never()),
    );
    expect(result.status).toBe(200);
    expect(result.json).toMatchObject({
      object: "chat.completion",
      choices: [{ message: { content: '{"verdict": false, "reason": "off topic"}' } }],
    });
    const sent = openai.lastRequest()!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe("Bearer sk-judge-key");
    expect(sent.json()).toMatchObject({ model: "gpt-4o-mini", stream: false });
    for (const name of ["cookie", "x-client-note", "x-gateway-api-key"])
      expect(sent.headers[name], name).toBeUndefined();
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({
      traceId: "trace-check-env",
      route: "/v1/chat/completions",
      path: "/v1/chat/completions",
      status: 200,
      provider: "openai",
      requestedModel: "gpt-4o-mini",
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number) },
    });
  });

  it("resolves a saved config by id or slug", async () => {
    const { records } = gateway.gateway.services.stores;
    const slug = unique("judge");
    const saved = await configStore(records).create(gateway.gateway.bootstrap.organisationId, {
      name: "Judge",
      slug,
      config: judgeConfig(),
      isDefault: false,
      status: "active",
    });
    for (const ref of [saved.id, slug]) {
      const env = checkEnvironment(clientRequest(), context());
      expect(await env.infer("chat", judgeBody, ref, never())).toMatchObject({ status: 200 });
    }
    const env = checkEnvironment(clientRequest(), context());
    expect(await env.infer("chat", judgeBody, "no-such-config", never())).toMatchObject({
      status: 404,
      json: { error: { code: "config_not_found" } },
    });
  });

  it("routes moderations through the moderations pipeline to the target's /moderations", async () => {
    const body = { model: "omni-moderation-latest", input: "some text" };
    const { result, logs } = await withLogs((ctx) =>
      checkEnvironment(clientRequest(), ctx).infer("moderations", body, judgeConfig(), never()),
    );
    expect(result).toEqual({
      status: 200,
      json: { id: "modr-1", model: "omni-moderation-latest", results: [{ flagged: true }] },
    });
    const sent = openai.lastRequest()!;
    expect(sent.path).toBe("/v1/moderations");
    expect(sent.json()).toEqual(body);
    expect(sent.headers.authorization).toBe("Bearer sk-judge-key");
    expect(logs[0]).toMatchObject({ path: "/v1/moderations", status: 200, provider: "openai", cost: 0 });
  });

  it("moderates on Mistral too: its answer arrives in OpenAI's shape", async () => {
    // Mistral's moderation answer (https://docs.mistral.ai/api/#tag/classifiers; test/fixtures/mistral).
    const mistral = await startMockServer((_request, response) =>
      sendJson(response, 200, {
        id: "mod-1",
        model: "mistral-moderation-2411",
        results: [
          { categories: { violence_and_threats: true, pii: false }, category_scores: { violence_and_threats: 0.9 } },
        ],
      }),
    );
    try {
      const config = { provider: "mistral-ai", custom_host: `${mistral.url}/v1`, api_key: "mistral-judge-key" };
      const { result, logs } = await withLogs((ctx) =>
        checkEnvironment(clientRequest(), ctx).infer(
          "moderations",
          { model: "omni-moderation-latest", input: "some text" },
          config,
          never(),
        ),
      );
      expect(result.status).toBe(200);
      expect(result.json).toMatchObject({
        results: [{ flagged: true, categories: { violence: true, hate: false }, category_scores: { violence: 0.9 } }],
      });
      const sent = mistral.requests[0]!;
      expect(sent.path).toBe("/v1/moderations");
      expect(sent.json()).toEqual({ model: "mistral-moderation-latest", input: "some text" });
      expect(sent.headers.authorization).toBe("Bearer mistral-judge-key");
      expect(logs[0]).toMatchObject({ path: "/v1/moderations", status: 200, provider: "mistral-ai" });
    } finally {
      await mistral.close();
    }
  });

  it("answers the provider's failure as a status and body, and stops when the check's signal aborts", async () => {
    openai.setFault({ status: 500 });
    const env = checkEnvironment(clientRequest(), context());
    const failed = await env.infer("chat", judgeBody, judgeConfig(), never());
    expect(failed.status).toBe(500);
    expect(failed.json).toMatchObject({ error: { message: expect.any(String) } });

    openai.setFault({ delayMs: 2_000 });
    const started = performance.now();
    const aborted = await env.infer("chat", judgeBody, judgeConfig(), AbortSignal.timeout(100));
    expect(aborted.status).toBeGreaterThanOrEqual(400);
    expect(performance.now() - started).toBeLessThan(1_500);
  });
});
