import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { guardrailStore } from "../../core/control/guardrails-store.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Guardrails in the inference pipeline (docs/guardrails.md) over real HTTP with the openai SDK: the mock
 * upstream records what reached the provider, so a denied request is one it never saw and a redaction is what
 * it received.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;
let judge: OpenAIMock;
let webhook: MockServer;

const REPLY = "The secret code is swordfish.";

beforeAll(async () => {
  [gateway, upstream, judge, webhook] = await Promise.all([
    startTestGateway(),
    startOpenAIMock({ reply: REPLY }),
    startOpenAIMock({ reply: JSON.stringify({ verdict: false, reason: "The text asks for a password." }) }),
    startMockServer((_request, res) => sendJson(res, 200, { verdict: true })),
  ]);
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([upstream?.close(), judge?.close(), webhook?.close()]);
});

beforeEach(() => upstream.reset());

const chatCalls = () => upstream.requests.filter((request) => request.path.endsWith("/chat/completions"));

/** A check of `default.regexMatch` in Portkey's shorthand: fails when the text matches `rule`. */
const forbid = (rule: string, actions: Record<string, unknown> = {}) => ({
  "default.regexMatch": { rule, not: true },
  deny: true,
  ...actions,
});

function configOf(extra: Record<string, unknown>) {
  return JSON.stringify({ provider: "openai", custom_host: `${upstream.url}/v1`, ...extra });
}

let traces = 0;
interface Client {
  openai: OpenAI;
  traceId: string;
  /** The last answer's raw body (the SDK keeps only `error` of a failed one). */
  lastBody(): any;
}

function client(config: string, key = gateway.adminKey): Client {
  const traceId = `gr-trace-${++traces}-${Math.random().toString(36).slice(2, 8)}`;
  let body: unknown;
  const openai = new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": key, "x-gateway-config": config, "x-gateway-trace-id": traceId },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      if (!(response.headers.get("content-type") ?? "").includes("event-stream"))
        body = await response
          .clone()
          .json()
          .catch(() => undefined);
      return response;
    },
  });
  return { openai, traceId, lastBody: () => body };
}

const ask = (c: Client, content: string, extra: Record<string, unknown> = {}) =>
  c.openai.chat.completions
    .create({ model: "gpt-4o-mini", messages: [{ role: "user", content }], ...extra })
    .withResponse();

async function askStream(c: Client, content: string) {
  const stream = await c.openai.chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content }],
    stream: true,
  });
  const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
  let error: unknown;
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (thrown) {
    error = thrown;
  }
  const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
  return { chunks, text, error };
}

async function failure(promise: Promise<unknown>): Promise<APIError> {
  const error = await promise.then(
    () => undefined,
    (thrown) => thrown,
  );
  expect(error).toBeInstanceOf(APIError);
  return error as APIError;
}

/** The request's log, once written. */
async function logOf(traceId: string): Promise<any> {
  let found: any;
  await expect
    .poll(
      async () => {
        const list = await call(gateway, gateway.adminKey, "GET", `/v1/logs?trace_id=${traceId}`);
        found = list.body.data?.find((log: any) => log.route !== "/v1/logs");
        return found !== undefined;
      },
      { timeout: 5_000 },
    )
    .toBe(true);
  return (await call(gateway, gateway.adminKey, "GET", `/v1/logs/${found.id}`)).body;
}

describe("input guardrails", () => {
  it("deny: 446 with Portkey's error and hook_results; the provider is never called", async () => {
    const c = client(configOf({ input_guardrails: [forbid("(?i)password")] }));
    const error = await failure(ask(c, "What is the admin password?"));
    expect(error.status).toBe(446);
    expect(error.error).toMatchObject({ type: "hooks_failed", param: null, code: null });
    expect(error.message).toMatch(/guardrail checks defined in the config failed/);
    const body = c.lastBody();
    expect(body.hook_results.after_request_hooks).toEqual([]);
    const [hook] = body.hook_results.before_request_hooks;
    expect(hook).toMatchObject({ verdict: false, deny: true, type: "guardrail" });
    expect(hook.checks[0]).toMatchObject({ id: "default.regexMatch", verdict: false });
    expect(hook.checks[0].explanation).toMatch(/matches the pattern/);
    expect(chatCalls()).toHaveLength(0);
  });

  it("pass: the answer carries hook_results; a failure without deny answers 246 and still reaches the provider", async () => {
    const passing = client(configOf({ input_guardrails: [forbid("(?i)password")] }));
    const { data, response } = await ask(passing, "What is the capital of France?");
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe(REPLY);
    expect((data as any).hook_results.before_request_hooks[0].verdict).toBe(true);

    const lenient = client(configOf({ input_guardrails: [forbid("(?i)password", { deny: false })] }));
    const failed = await ask(lenient, "password?");
    expect(failed.response.status).toBe(246);
    expect(failed.data.choices[0]!.message.content).toBe(REPLY);
    expect((failed.data as any).hook_results.before_request_hooks[0].verdict).toBe(false);
    expect(chatCalls()).toHaveLength(2);
  });

  it("soft deny: 200 with the denial as a chat completion, and as a stream when streaming", async () => {
    const c = client(configOf({ input_guardrails: [forbid("(?i)password", { soft_deny_200: true })] }));
    const { data, response } = await ask(c, "the password please");
    expect(response.status).toBe(200);
    expect(data.choices[0]).toMatchObject({ finish_reason: "content_filter" });
    expect(data.choices[0]!.message.content).toMatch(/^The request was blocked by the guardrail/);
    expect(data.usage).toMatchObject({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });

    const streamed = await askStream(c, "the password please");
    expect(streamed.error).toBeUndefined();
    expect(streamed.text).toMatch(/^The request was blocked by the guardrail/);
    expect(streamed.chunks.at(-1)!.choices[0]!.finish_reason).toBe("content_filter");
    expect(chatCalls()).toHaveLength(0);
  });

  it("runs inherited guardrails once across a fallback, and a target's own ones too", async () => {
    const config = JSON.stringify({
      strategy: { mode: "fallback" },
      input_guardrails: [{ id: "root-check", ...forbid("(?i)password") }],
      targets: [
        { provider: "openai", custom_host: `${upstream.url}/fails/v1` },
        {
          provider: "openai",
          custom_host: `${upstream.url}/v1`,
          input_guardrails: [{ id: "target-check", ...forbid("(?i)secret") }],
        },
      ],
    });
    upstream.setFault({ status: 500, path: "/fails/v1/chat/completions" });
    const c = client(config);
    const { data } = await ask(c, "Hello there");
    expect((data as any).hook_results.before_request_hooks.map((hook: any) => hook.id)).toEqual([
      "root-check",
      "target-check",
    ]);
    const log = await logOf(c.traceId);
    expect(log.guardrails.map((verdict: any) => verdict.id)).toEqual(["root-check", "target-check"]);
    expect(log.attempts).toHaveLength(2);
  });

  it("a hostile pattern on a long prompt answers promptly (RE2)", async () => {
    const c = client(configOf({ input_guardrails: [{ "default.regexMatch": { rule: "(a+)+$" }, deny: true }] }));
    const started = performance.now();
    const error = await failure(ask(c, `${"a".repeat(50_000)}!`));
    expect(error.status).toBe(446);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("async guardrails never hold the request; their verdicts reach the log", async () => {
    const c = client(configOf({ input_guardrails: [forbid("(?i)password", { async: true, deny: false })] }));
    const { data, response } = await ask(c, "password?");
    expect(response.status).toBe(200);
    expect(data.choices[0]!.message.content).toBe(REPLY);
    expect((data as any).hook_results).toBeUndefined();
    const log = await logOf(c.traceId);
    expect(log.guardrails).toMatchObject([{ phase: "input", async: true, verdict: false }]);
  });

  it("a slow async webhook check does not delay the answer; its verdict is logged when it ends", async () => {
    webhook.handle(async (_request, res) => {
      await new Promise((resolve) => setTimeout(resolve, 800));
      sendJson(res, 200, { verdict: false });
    });
    const c = client(
      configOf({ input_guardrails: [{ "default.webhook": { webhookURL: `${webhook.url}/judge` }, async: true }] }),
    );
    const started = performance.now();
    await ask(c, "Hello");
    expect(performance.now() - started).toBeLessThan(600);
    const log = await logOf(c.traceId);
    expect(log.guardrails).toMatchObject([{ async: true, verdict: false, checks: [{ id: "default.webhook" }] }]);
  });

  it("redaction: the provider and the log see the redacted prompt", async () => {
    const c = client(configOf({ input_guardrails: [{ "default.pii": { redact: true } }] }));
    const { data } = await ask(c, "Email me at jane.doe@example.com please");
    expect(data.choices[0]!.message.content).toBe(REPLY);
    const sent = chatCalls()[0]!.json().messages[0].content;
    expect(sent).not.toContain("jane.doe@example.com");
    expect((data as any).hook_results.before_request_hooks[0].transformed).toBe(true);
    const log = await logOf(c.traceId);
    expect(JSON.stringify(log.requestBody)).not.toContain("jane.doe@example.com");
  });

  it("webhook: the check posts to the local server and its verdict denies", async () => {
    webhook.handle((_request, res) => sendJson(res, 200, { verdict: false }));
    webhook.requests.length = 0;
    const c = client(
      configOf({
        input_guardrails: [
          { "default.webhook": { webhookURL: `${webhook.url}/judge`, headers: { "x-team": "a" } }, deny: true },
        ],
      }),
    );
    const error = await failure(ask(c, "Hello"));
    expect(error.status).toBe(446);
    expect(webhook.requests).toHaveLength(1);
    expect(webhook.requests[0]!.headers["x-team"]).toBe("a");
  });

  it("model-graded: the judge is called through the gateway and its verdict denies", async () => {
    judge.reset();
    const judgeConfig = { provider: "openai", custom_host: `${judge.url}/v1` };
    const c = client(
      configOf({
        input_guardrails: [
          {
            "default.modelGraded": { config: judgeConfig, model: "gpt-4o-mini", criteria: "no passwords" },
            deny: true,
          },
        ],
      }),
    );
    const error = await failure(ask(c, "tell me the password"));
    expect(error.status).toBe(446);
    expect(judge.requests.some((request) => request.path.endsWith("/chat/completions"))).toBe(true);
    expect(chatCalls()).toHaveLength(0);
  });
});

describe("output guardrails", () => {
  it("JSON: deny answers 446 with the answer's verdicts in after_request_hooks", async () => {
    const c = client(configOf({ output_guardrails: [forbid("swordfish")] }));
    const error = await failure(ask(c, "What is the code?"));
    expect(error.status).toBe(446);
    expect(c.lastBody().hook_results.after_request_hooks[0]).toMatchObject({ verdict: false, deny: true });
    expect(chatCalls()).toHaveLength(1);
  });

  it("JSON: soft deny answers the denial with the provider's model", async () => {
    const c = client(configOf({ output_guardrails: [forbid("swordfish", { soft_deny_200: true })] }));
    const { data } = await ask(c, "What is the code?");
    expect(data.choices[0]!.finish_reason).toBe("content_filter");
    expect(data.choices[0]!.message.content).toMatch(/^The answer was blocked/);
  });

  it("stream, pass: every chunk arrives", async () => {
    const c = client(configOf({ output_guardrails: [forbid("password")] }));
    const streamed = await askStream(c, "What is the code?");
    expect(streamed.error).toBeUndefined();
    expect(streamed.text).toBe(REPLY);
    expect(streamed.chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  });

  it("stream, deny: the content streamed, then an error event with the 446 body instead of the finish", async () => {
    const c = client(configOf({ output_guardrails: [forbid("swordfish")] }));
    const streamed = await askStream(c, "What is the code?");
    expect(streamed.text).toBe(REPLY);
    expect(streamed.chunks.some((chunk) => chunk.choices[0]?.finish_reason)).toBe(false);
    expect(streamed.error).toBeInstanceOf(APIError);
    expect((streamed.error as APIError).error).toMatchObject({ type: "hooks_failed" });
    const log = await logOf(c.traceId);
    expect(log.status).toBe(446);
    expect(log.guardrails).toMatchObject([{ phase: "output", verdict: false }]);
  });

  it("stream, soft deny: a last chunk with the denial and content_filter, then the end", async () => {
    const c = client(configOf({ output_guardrails: [forbid("swordfish", { soft_deny_200: true })] }));
    const streamed = await askStream(c, "What is the code?");
    expect(streamed.error).toBeUndefined();
    expect(streamed.text).toMatch(/^The secret code is swordfish\.The answer was blocked/);
    expect(streamed.chunks.at(-1)!.choices[0]!.finish_reason).toBe("content_filter");
  });

  it("stream, redaction: the stream is read whole and the redacted answer replayed as chunks", async () => {
    const mail = await startOpenAIMock({ reply: "Write to jane.doe@example.com today." });
    try {
      const c = client(
        JSON.stringify({
          provider: "openai",
          custom_host: `${mail.url}/v1`,
          output_guardrails: [{ "default.pii": { redact: true } }],
        }),
      );
      const streamed = await askStream(c, "Whom do I write to?");
      expect(streamed.error).toBeUndefined();
      expect(streamed.text).not.toContain("jane.doe@example.com");
      expect(streamed.text).toMatch(/^Write to .+ today\.$/);
    } finally {
      await mail.close();
    }
  });
});

describe("pass-through", () => {
  const proxy = (config: string, content: string) =>
    fetch(`${gateway.url}/v1/proxy/chat/completions`, {
      method: "POST",
      headers: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-config": config,
        authorization: "Bearer sk-upstream",
        "content-type": "application/json",
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content }] }),
    });

  it("a chat-shaped body runs the config's input guardrails: denied, or forwarded as it came", async () => {
    const config = configOf({ input_guardrails: [forbid("(?i)password")] });
    const denied = await proxy(config, "the password");
    expect(denied.status).toBe(446);
    expect((await denied.json()).hook_results.before_request_hooks[0].verdict).toBe(false);
    expect(chatCalls()).toHaveLength(0);

    const passed = await proxy(config, "Hello");
    expect(passed.status).toBe(200);
    expect((await passed.json()).choices[0].message.content).toBe(REPLY);
    expect(chatCalls()[0]!.json().messages[0].content).toBe("Hello");
  });

  it("a redaction is what is forwarded", async () => {
    const response = await proxy(
      configOf({ input_guardrails: [{ "default.pii": { redact: true } }] }),
      "Email jane.doe@example.com",
    );
    expect(response.status).toBe(200);
    expect(chatCalls()[0]!.json().messages[0].content).not.toContain("jane.doe@example.com");
  });
});

describe("logs and analytics", () => {
  it("logs every verdict with its checks; analytics count them per guardrail", async () => {
    const c = client(
      configOf({
        input_guardrails: [{ id: "no-passwords", ...forbid("(?i)password", { deny: false }) }],
        output_guardrails: [{ id: "no-swords", ...forbid("sword", { deny: false }) }],
      }),
    );
    await ask(c, "password?");
    const log = await logOf(c.traceId);
    expect(log.guardrails).toHaveLength(2);
    expect(log.guardrails[0]).toMatchObject({ id: "no-passwords", phase: "input", verdict: false, async: false });
    expect(log.guardrails[0].checks[0]).toMatchObject({ id: "default.regexMatch", verdict: false });
    expect(log.guardrails[0].checks[0].execution_time_ms).toBeGreaterThanOrEqual(0);
    expect(log.guardrails[1]).toMatchObject({ id: "no-swords", phase: "output", verdict: false });

    let graph: any;
    await expect
      .poll(
        async () => {
          graph = (await call(gateway, gateway.adminKey, "GET", "/v1/analytics/graphs/guardrails")).body;
          return graph.guardrails?.find((row: any) => row.guardrail_id === "no-passwords")?.runs ?? 0;
        },
        { timeout: 5_000 },
      )
      .toBeGreaterThanOrEqual(1);
    const row = graph.guardrails.find((entry: any) => entry.guardrail_id === "no-passwords");
    expect(row).toMatchObject({ failed: row.runs, denied: 0, checks_run: row.runs, checks_failed: row.runs });
    expect(graph.summary.runs).toBeGreaterThanOrEqual(2);
    expect(graph.data_points.at(-1).runs).toBeGreaterThanOrEqual(2);
  });
});

describe("the status a log records", () => {
  it("a guardrail that only logs: the client gets 246, and so does the log (JSON and stream)", async () => {
    const lenient = client(configOf({ input_guardrails: [forbid("(?i)password", { deny: false })] }));
    const { response } = await ask(lenient, "password?");
    expect(response.status).toBe(246);
    expect((await logOf(lenient.traceId)).status).toBe(246);

    const streaming = client(configOf({ input_guardrails: [forbid("(?i)password", { deny: false })] }));
    const raw = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk-upstream",
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-config": configOf({ input_guardrails: [forbid("(?i)password", { deny: false })] }),
        "x-gateway-trace-id": streaming.traceId,
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "password?" }], stream: true }),
    });
    expect(raw.status).toBe(246);
    expect(await raw.text()).toContain("[DONE]");
    expect((await logOf(streaming.traceId)).status).toBe(246);

    const passing = client(configOf({ input_guardrails: [forbid("(?i)password", { deny: false })] }));
    expect((await ask(passing, "Hello")).response.status).toBe(200);
    expect((await logOf(passing.traceId)).status).toBe(200);
  });
});

describe("organisation defaults", () => {
  it("apply to every request, except in an excluded workspace", async () => {
    const { records } = gateway.gateway.services.stores;
    const organisationId = gateway.gateway.bootstrap.organisationId;
    const saved = await guardrailStore(records).create(organisationId, {
      slug: `org-no-passwords-${Math.random().toString(36).slice(2, 8)}`,
      name: "No passwords",
      checks: [{ id: "default.regexMatch", parameters: { rule: "(?i)password", not: true } }],
      actions: { deny: true, async: false, soft_deny_200: false, on_error: "open", timeout_ms: 5_000 },
      status: "active",
    });
    const workspace = await seedWorkspace(gateway, "Exempt team");
    const exempt = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "exempt",
      workspace_id: workspace.id,
      scopes: [],
    });
    const set = await call(gateway, gateway.adminKey, "PUT", "/v1/admin/organisation/defaults", {
      input_guardrails: [saved.id],
    });
    expect(set.status).toBe(200);
    const excluded = await call(gateway, gateway.adminKey, "PUT", "/v1/workspace-exclusions/input-guardrails", {
      workspace_ids: [workspace.id],
    });
    expect(excluded.status).toBe(200);
    try {
      const plainConfig = configOf({});
      const error = await failure(ask(client(plainConfig), "the password"));
      expect(error.status).toBe(446);
      const { response } = await ask(client(plainConfig, exempt.key), "the password");
      expect(response.status).toBe(200);
      expect(chatCalls()).toHaveLength(1);
    } finally {
      await call(gateway, gateway.adminKey, "PUT", "/v1/admin/organisation/defaults", { input_guardrails: [] });
    }
  });
});
