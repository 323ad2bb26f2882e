import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import { newOutcome } from "../../../core/gateway/outcome.ts";
import { sseResponse } from "../../../core/gateway/stream/sse-source.ts";
import type { RequestContext } from "../../../core/http/context.ts";
import type {
  CheckDefinition,
  CheckEnvironment,
  GuardrailActions,
  GuardrailDefinition,
} from "../../../core/guardrails/types.ts";
import { readSseEvents } from "../../helpers/sse-events.ts";

/**
 * The guardrail steps of one request over checks made for the test (a redactor, a slow check) next to the real
 * regex check: input denial and soft denial, redaction into the body sent upstream and into the log, guardrails
 * not run twice across fallback targets, output on JSON and on streams, async verdicts.
 */

const redactor: CheckDefinition<{ word: string }> = {
  id: "test.redact",
  description: "replaces a word",
  parameters: z.object({ word: z.string() }),
  rewrites: () => true,
  run: (input, { word }) => ({
    verdict: true,
    explanation: "redacted",
    transformedParts: input.parts.map((part) => part.replaceAll(word, "[X]")),
  }),
};
let slowRuns = 0;
const slow: CheckDefinition<{ ms: number }> = {
  id: "test.slow",
  description: "waits, then fails",
  parameters: z.object({ ms: z.number() }),
  run: (_input, { ms }) => {
    slowRuns++;
    return new Promise((resolve) => setTimeout(() => resolve({ verdict: false, explanation: "too slow" }), ms));
  },
};

vi.mock("../../../core/guardrails/checks/registry.ts", async (original) => {
  const real = await original<typeof import("../../../core/guardrails/checks/registry.ts")>();
  const extra = new Map<string, CheckDefinition>([redactor, slow].map((check) => [check.id, check]));
  return { ...real, findCheck: (id: string) => extra.get(id) ?? real.findCheck(id) };
});

const { GuardrailPhases } = await import("../../../core/guardrails/phases.ts");

const actions = (overrides: Partial<GuardrailActions> = {}): GuardrailActions => ({
  deny: true,
  async: false,
  soft_deny_200: false,
  on_error: "open",
  timeout_ms: 1_000,
  ...overrides,
});

/** Fails when the judged text matches `rule`. */
const forbid = (id: string, rule: string, overrides?: Partial<GuardrailActions>): GuardrailDefinition => ({
  id,
  checks: [{ id: "default.regexMatch", parameters: { rule, not: true } }],
  actions: actions(overrides),
});
const redact = (id: string, word: string): GuardrailDefinition => ({
  id,
  checks: [{ id: "test.redact", parameters: { word } }],
  actions: actions(),
});

const env: CheckEnvironment = {
  postJson: () => Promise.reject(new Error("not in this test")),
  getJson: () => Promise.reject(new Error("not in this test")),
  infer: () => Promise.reject(new Error("not in this test")),
};

function setup(route: "chat" | "completions" | "embeddings" = "chat", body?: Record<string, any>) {
  const waiting: Array<Promise<unknown>> = [];
  const ctx = {
    traceId: "trace-1",
    params: {},
    signal: new AbortController().signal,
    waitUntil: (work: Promise<unknown>) => waiting.push(work),
    startedAt: performance.now(),
    gateway: { metadata: { team: "a" } },
    services: { settings: { GATEWAY_GUARDRAIL_BUDGET_CHARS: 1_000_000 } },
  } as unknown as RequestContext;
  const outcome = newOutcome(route, "gpt-4o-mini", body?.stream === true);
  outcome.requestBody = body;
  const told: string[] = [];
  const phases = new GuardrailPhases({
    route,
    request: new Request("http://gateway/v1/chat/completions", { method: "POST" }),
    ctx,
    outcome,
    requestId: "chatcmpl-gw1",
    env,
    onVerdicts: (verdicts) => told.push(...verdicts.map((verdict) => verdict.id)),
  });
  return { phases, outcome, waiting, told };
}

const chatBody = (content: string, extra: Record<string, unknown> = {}) => ({
  model: "gpt-4o-mini",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content },
  ],
  ...extra,
});

const jsonAnswer = (content: string) =>
  new Response(
    JSON.stringify({
      id: "chatcmpl-up",
      object: "chat.completion",
      created: 5,
      model: "gpt-4o-mini-2024",
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    }),
    { status: 200, headers: { "content-type": "application/json", "x-gateway-provider": "openai" } },
  );

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-up", object: "chat.completion.chunk", created: 5, model: "gpt-4o-mini", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;

/** A streamed answer as the gateway makes them, one piece per read. */
function streamAnswer(words: string[]): Response {
  const pieces = [chunk({ role: "assistant", content: "" }), ...words.map((word) => chunk({ content: word }))];
  pieces.push(chunk({}, "stop") + "data: [DONE]\n\n");
  return sseResponse(
    { next: async () => pieces.shift() ?? null, cancel: async () => {} },
    { "x-gateway-provider": "openai" },
  );
}

describe("input phase", () => {
  it("passes the body through when every guardrail passes, and records the verdicts", async () => {
    const { phases, outcome } = setup();
    const body = chatBody("What is the capital of France?");
    const result = await phases.input([forbid("gr_a", "password")], body);
    expect(result.body).toBe(body);
    expect(outcome.guardrails).toMatchObject([{ id: "gr_a", phase: "input", verdict: true }]);
  });

  it("denies with 446 and Portkey's body; nothing more is judged", async () => {
    const { phases, outcome } = setup();
    const result = await phases.input([forbid("gr_a", "password")], chatBody("my password is hunter2"));
    expect(result.answer?.status).toBe(446);
    const body = await result.answer!.json();
    expect(body.error.type).toBe("hooks_failed");
    expect(body.hook_results.before_request_hooks[0]).toMatchObject({ id: "gr_a", verdict: false, deny: true });
    expect(body.hook_results.before_request_hooks[0].checks[0].explanation).toMatch(/matches the pattern/);
    expect(outcome.status).toBe(446);
    expect(outcome.error?.code).toBe("hooks_failed");
    await outcome.done;
    const passedThrough = jsonAnswer("anything");
    expect(await phases.output([forbid("gr_b", "x")], passedThrough, chatBody("x"))).toBe(passedThrough);
  });

  it("a failed guardrail without deny only records its verdict", async () => {
    const { phases, outcome } = setup();
    const result = await phases.input([forbid("gr_a", "password", { deny: false })], chatBody("password?"));
    expect(result.answer).toBeUndefined();
    expect(outcome.guardrails?.[0]?.verdict).toBe(false);
  });

  it("soft deny answers 200 with the denial as a chat completion, or as its stream", async () => {
    const soft = forbid("gr_soft", "password", { soft_deny_200: true });
    const json = setup();
    const answer = (await json.phases.input([soft], chatBody("password"))).answer!;
    expect(answer.status).toBe(200);
    const completion = await answer.json();
    expect(completion.choices[0]).toMatchObject({ finish_reason: "content_filter" });
    expect(completion.choices[0].message.content).toMatch(/^The request was blocked by the guardrail 'gr_soft'/);
    expect(completion.usage.total_tokens).toBe(0);
    expect(json.outcome.status).toBe(200);

    const streamed = setup();
    const sse = (await streamed.phases.input([soft], chatBody("password", { stream: true }))).answer!;
    expect(sse.headers.get("content-type")).toMatch(/event-stream/);
    const events = readSseEvents(await sse.text());
    expect(events.at(-1)).toBe("[DONE]");
    expect(events.some((data) => data.includes('"finish_reason":"content_filter"'))).toBe(true);
  });

  it("soft deny on embeddings answers 446: an embedding cannot carry a message", async () => {
    const { phases } = setup("embeddings");
    const result = await phases.input([forbid("gr_soft", "secret", { soft_deny_200: true })], {
      model: "text-embedding-3-small",
      input: "top secret",
    });
    expect(result.answer?.status).toBe(446);
  });

  it("redaction rewrites the body sent upstream and the logged request, never the client's object", async () => {
    const { phases, outcome } = setup("chat", chatBody("call Alice at home"));
    const sent = chatBody("call Alice at home", { temperature: 0 });
    const result = await phases.input([redact("gr_r", "Alice")], sent);
    expect(result.body?.messages[1].content).toBe("call [X] at home");
    expect(result.body?.temperature).toBe(0);
    expect(sent.messages[1]!.content).toBe("call Alice at home");
    expect((outcome.requestBody as any).messages[1].content).toBe("call [X] at home");
    expect(outcome.guardrails?.[0]?.transformed).toBe(true);
  });

  it("runs a guardrail once per request: a fallback target with the same ones gets the redaction without a re-run", async () => {
    const { phases, outcome } = setup();
    slowRuns = 0;
    const slowCheck: GuardrailDefinition = {
      id: "gr_slow",
      checks: [{ id: "test.slow", parameters: { ms: 1 } }],
      actions: actions({ deny: false }),
    };
    const first = await phases.input([redact("gr_r", "Alice"), slowCheck], chatBody("Alice?"));
    const second = await phases.input([redact("gr_r", "Alice"), slowCheck], chatBody("Alice?", { model: "other" }));
    expect(second.body?.messages[1].content).toBe("[X]?");
    expect(second.body?.model).toBe("other");
    expect(slowRuns).toBe(1);
    // A target with one more guardrail runs only that one.
    const third = await phases.input([redact("gr_r", "Alice"), forbid("gr_new", "Bob")], chatBody("Alice?"));
    expect(third.body?.messages[1].content).toBe("[X]?");
    expect(outcome.guardrails?.map((verdict) => verdict.id)).toEqual(["gr_r", "gr_slow", "gr_new"]);
    expect(first.body?.messages[1].content).toBe("[X]?");
  });

  it("async guardrails do not hold the request; their verdicts reach the outcome and the log waits for them", async () => {
    const { phases, outcome, waiting, told } = setup();
    const started = performance.now();
    await phases.input(
      [
        { id: "gr_async", checks: [{ id: "test.slow", parameters: { ms: 60 } }], actions: actions({ async: true }) },
        forbid("gr_sync", "nothing"),
      ],
      chatBody("hello"),
    );
    expect(performance.now() - started).toBeLessThan(40);
    expect(outcome.guardrails?.map((verdict) => verdict.id)).toEqual(["gr_sync"]);
    expect(waiting).toHaveLength(1);
    await outcome.guardrailsDone;
    expect(outcome.guardrails?.[1]).toMatchObject({ id: "gr_async", async: true, verdict: false });
    // Spans are told every verdict, async ones when they end.
    expect(told).toEqual(["gr_sync", "gr_async"]);
  });
});

describe("output phase, JSON", () => {
  it("adds hook_results to the answer, and answers 246 when a guardrail failed without denying", async () => {
    const { phases, outcome } = setup();
    await phases.input([forbid("gr_in", "France", { deny: false })], chatBody("France?"));
    const response = await phases.output([forbid("gr_out", "password")], jsonAnswer("Paris."), chatBody("France?"));
    expect(response.status).toBe(246);
    // The log records the status the client got; the provider's stays what the cache reads.
    expect(outcome.clientStatus).toBe(246);
    expect(response.headers.get("x-gateway-provider")).toBe("openai");
    const body = await response.json();
    expect(body.choices[0].message.content).toBe("Paris.");
    expect(body.hook_results.before_request_hooks[0]).toMatchObject({ id: "gr_in", verdict: false });
    expect(body.hook_results.after_request_hooks[0]).toMatchObject({ id: "gr_out", verdict: true });
  });

  it("with input guardrails only, adds their hook_results to the answer's text and drops a stale content-length", async () => {
    const { phases } = setup();
    await phases.input([forbid("gr_in", "France", { deny: false })], chatBody("France?"));
    const upstream = jsonAnswer("Paris.");
    const text = await upstream.text();
    const answer = new Response(text, {
      status: 200,
      headers: {
        "content-type": "application/json",
        "content-length": String(text.length),
        "x-gateway-provider": "openai",
      },
    });
    const response = await phases.output([], answer, chatBody("France?"));
    expect(response.status).toBe(246);
    expect(response.headers.get("content-length")).toBeNull();
    expect(response.headers.get("x-gateway-provider")).toBe("openai");
    const sent = await response.text();
    expect(sent.startsWith(text.slice(0, -1))).toBe(true);
    const body = JSON.parse(sent);
    expect(body.choices[0].message.content).toBe("Paris.");
    expect(body.hook_results.before_request_hooks[0]).toMatchObject({ id: "gr_in", verdict: false });
    expect(body.hook_results.after_request_hooks).toEqual([]);
  });

  it("without guardrails on the request the answer is unchanged (no hook_results)", async () => {
    const { phases } = setup();
    const body = await (await phases.output([], jsonAnswer("Paris."), chatBody("France?"))).json();
    expect(body.hook_results).toBeUndefined();
  });

  it("denies the answer with 446, both phases in hook_results", async () => {
    const { phases, outcome } = setup();
    await phases.input([forbid("gr_in", "nothing")], chatBody("France?"));
    const response = await phases.output([forbid("gr_out", "Paris")], jsonAnswer("Paris."), chatBody("France?"));
    expect(response.status).toBe(446);
    const body = await response.json();
    expect(body.hook_results.before_request_hooks).toHaveLength(1);
    expect(body.hook_results.after_request_hooks[0]).toMatchObject({ id: "gr_out", verdict: false });
    expect(outcome.error?.status).toBe(446);
  });

  it("soft deny keeps the provider's id and model", async () => {
    const { phases } = setup();
    const response = await phases.output(
      [forbid("gr_out", "Paris", { soft_deny_200: true })],
      jsonAnswer("Paris."),
      chatBody("France?"),
    );
    const body = await response.json();
    expect(body).toMatchObject({ id: "chatcmpl-up", model: "gpt-4o-mini-2024" });
    expect(body.choices[0].finish_reason).toBe("content_filter");
  });

  it("redacts the answer sent to the client and the logged one", async () => {
    const { phases, outcome } = setup();
    const response = await phases.output([redact("gr_r", "Alice")], jsonAnswer("Ask Alice."), chatBody("who?"));
    const body = await response.json();
    expect(body.choices[0].message.content).toBe("Ask [X].");
    expect((outcome.responseBody as any).choices[0].message.content).toBe("Ask [X].");
  });
});

describe("output phase, streams", () => {
  it("passes: every chunk and [DONE] reach the client", async () => {
    const { phases, outcome } = setup("chat", chatBody("hi", { stream: true }));
    const response = await phases.output(
      [forbid("gr_out", "password")],
      streamAnswer(["Hello ", "there."]),
      chatBody("hi"),
    );
    expect(response.status).toBe(200);
    const events = readSseEvents(await response.text());
    expect(events.at(-1)).toBe("[DONE]");
    expect(events).toHaveLength(5);
    await outcome.guardrailsDone;
    expect(outcome.guardrails?.[0]).toMatchObject({ id: "gr_out", phase: "output", verdict: true });
  });

  it("deny after content streamed: the held tail becomes an error event with the 446 body, then the stream ends", async () => {
    const { phases, outcome } = setup();
    const response = await phases.output(
      [forbid("gr_out", "secret")],
      streamAnswer(["The ", "secret."]),
      chatBody("?"),
    );
    const events = readSseEvents(await response.text());
    expect(events.slice(0, 3).map((data) => JSON.parse(data).choices[0].delta.content)).toEqual([
      "",
      "The ",
      "secret.",
    ]);
    expect(events).toHaveLength(4);
    const last = JSON.parse(events[3]!);
    expect(last.error.type).toBe("hooks_failed");
    expect(last.hook_results.after_request_hooks[0].id).toBe("gr_out");
    expect(outcome.error?.status).toBe(446);
  });

  it("soft deny: a last chunk with the message and content_filter, then [DONE]", async () => {
    const { phases } = setup();
    const response = await phases.output(
      [forbid("gr_out", "secret", { soft_deny_200: true })],
      streamAnswer(["The ", "secret."]),
      chatBody("?"),
    );
    const events = readSseEvents(await response.text());
    expect(events.at(-1)).toBe("[DONE]");
    const last = JSON.parse(events.at(-2)!);
    expect(last.choices[0].finish_reason).toBe("content_filter");
    expect(last.choices[0].delta.content).toMatch(/^The answer was blocked/);
  });

  it("a redacting guardrail reads the stream whole and replays the redacted answer as chunks", async () => {
    const { phases, outcome } = setup();
    const response = await phases.output([redact("gr_r", "Alice")], streamAnswer(["Ask ", "Alice."]), chatBody("?"));
    const events = readSseEvents(await response.text());
    expect(events.at(-1)).toBe("[DONE]");
    const text = events
      .slice(0, -1)
      .map((data) => JSON.parse(data).choices[0]?.delta?.content ?? "")
      .join("");
    expect(text).toBe("Ask [X].");
    // Once the stream's own bookkeeping is done (sse-answer.ts finishes the outcome), the log keeps the redaction.
    outcome.responseBody = { choices: [{ message: { content: "Ask Alice." } }] };
    outcome.finish();
    await outcome.guardrailsDone;
    expect((outcome.responseBody as any).choices[0].message.content).toBe("Ask [X].");
  });
});
