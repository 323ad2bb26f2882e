import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANSWER,
  type BrokenStreams,
  type Fault,
  PROMPT_TOKENS,
  type Shape,
  startBrokenStreams,
} from "../helpers/broken-streams.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { apiCaller, type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * A stream that breaks after content reached the client is finished by the next target of a fallback with
 * `on_stream_failure: "continue"` (docs/routing.md): the client reads one complete answer in one stream (one id,
 * one finish, one usage for both legs), told in the last chunk who continued, and the log holds both legs with
 * their tokens and costs. Upstreams in four providers' shapes cut, stall, fail and garble their streams.
 */

let upstream: BrokenStreams;
let gateway: TestGateway;
const api = apiCaller(() => gateway);

/** Models the catalog prices, one per shape (each target forces its own). */
const MODELS: Record<Shape, string> = {
  openai: "gpt-4o-mini",
  anthropic: "claude-3-5-haiku-20241022",
  gemini: "gemini-2.0-flash",
  bedrock: "anthropic.claude-3-haiku-20240307-v1:0",
};
const PROVIDERS: Record<Shape, string> = {
  openai: "openai",
  anthropic: "anthropic",
  gemini: "google",
  bedrock: "bedrock",
};

/** A config target playing one shape and behaviour of the broken-streams upstream. */
function target(shape: Shape, fault: Fault): Record<string, unknown> {
  const common = {
    provider: PROVIDERS[shape],
    custom_host: upstream.host(shape, fault),
    override_params: { model: MODELS[shape] },
    // A stall is noticed after this much silence.
    request_timeout: 1500,
  };
  if (shape === "bedrock")
    return { ...common, aws_access_key_id: "AKIDEXAMPLE", aws_secret_access_key: "secret", aws_region: "us-east-1" };
  return { ...common, api_key: `key-${shape}` };
}

function continuing(...targets: Array<Record<string, unknown>>) {
  return { strategy: { mode: "fallback", on_stream_failure: "continue" }, targets };
}

function client(config: unknown): OpenAI {
  return new OpenAI({
    apiKey: "unused",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config) },
    maxRetries: 0,
    timeout: 20_000,
  });
}

async function readChat(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  const chunks: any[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
  const finishes = chunks.flatMap((chunk) => chunk.choices.map((choice: any) => choice.finish_reason).filter(Boolean));
  return { chunks, text, finishes };
}

async function logOf(traceId: string) {
  let id: string | undefined;
  await expect
    .poll(
      async () => {
        id = (await api("GET", `/v1/logs?limit=1&trace_id=${encodeURIComponent(traceId)}`)).body.data[0]?.id;
        return id;
      },
      { timeout: 10_000 },
    )
    .toBeDefined();
  return (await api("GET", `/v1/logs/${id}`)).body;
}

beforeAll(async () => {
  upstream = await startBrokenStreams();
  gateway = await startTestGateway();
  // One whole stream first: a process's first stream loads the price data before it relays (about as long as a
  // broken target waits before it cuts), and a cut (a reset) that arrives before the gateway read the first
  // bytes discards them: that target then failed before its first chunk, a plain fallback, not a continuation.
  const warm = await client(continuing(target("openai", "ok"))).chat.completions.create({
    model: "any",
    messages: [{ role: "user", content: "Say the pangram." }],
    stream: true,
  });
  for await (const _chunk of warm);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** Which shape continues which: every pair crosses a prefill target and an instructed one. */
const NEXT: Record<Shape, Shape> = { openai: "anthropic", anthropic: "openai", gemini: "bedrock", bedrock: "gemini" };

describe("chat completions: a broken stream is finished by the next target", () => {
  for (const shape of ["openai", "anthropic", "gemini", "bedrock"] as const) {
    for (const fault of ["cut", "stall", "error", "malformed"] as const) {
      it(`${shape} ${fault}, continued by ${NEXT[shape]}`, async () => {
        const next = NEXT[shape];
        const config = continuing(target(shape, fault), target(next, "ok"));
        const { data: stream, response } = await client(config)
          .chat.completions.create({
            model: "any",
            messages: [{ role: "user", content: "Say the pangram." }],
            stream: true,
            stream_options: { include_usage: true },
          })
          .withResponse();
        const { chunks, text, finishes } = await readChat(stream);

        expect(text).toBe(ANSWER);
        expect(finishes).toEqual(["stop"]);
        expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
        expect(chunks.every((chunk) => chunk.choices.every((choice: any) => choice.index === 0))).toBe(true);
        const last = chunks.at(-1);
        expect(last.gateway_continuation).toMatchObject({
          from: { provider: PROVIDERS[shape], target: "config.targets[0]" },
          by: { provider: PROVIDERS[next], target: "config.targets[1]" },
        });
        // One usage for the answer, both legs': the continuing one reported its own, the broken one's is counted.
        expect(last.usage.prompt_tokens).toBeGreaterThan(PROMPT_TOKENS);
        expect(last.usage.total_tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);

        // The continuing target was asked to go on from what the client had.
        const asked = JSON.stringify(upstream.bodies(next, "ok").at(-1));
        expect(asked).toContain("The quick bro");

        const log = await logOf(response.headers.get("x-gateway-trace-id")!);
        expect(log.status).toBe(200);
        expect(log.continuation).toMatchObject({ by: { target: "config.targets[1]" } });
        expect(log.attempts).toEqual([
          expect.objectContaining({ targetPath: "config.targets[0]", stream: "broke", error: expect.any(String) }),
          expect.objectContaining({ targetPath: "config.targets[1]", stream: "continued", status: 200 }),
        ]);
        const [broke, continued] = log.attempts;
        expect(broke.cost).toBeGreaterThan(0);
        expect(continued.cost).toBeGreaterThan(0);
        expect(log.cost).toBeCloseTo(broke.cost + continued.cost, 12);
        expect(log.usage.totalTokens).toBe(broke.usage.totalTokens + continued.usage.totalTokens);
      });
    }
  }
});

describe("Responses: the same response and output item go on", () => {
  const cases: Array<[Shape, Fault, Shape]> = [
    ["openai", "cut", "anthropic"],
    ["anthropic", "error", "openai"],
    ["gemini", "stall", "openai"],
  ];
  for (const [shape, fault, next] of cases) {
    it(`${shape} ${fault} (${shape === "openai" ? "native" : "translated"}), continued by ${next}`, async () => {
      const config = continuing(target(shape, fault), target(next, "ok"));
      const { data: stream, response } = await client(config)
        .responses.create({ model: "any", input: "Say the pangram.", stream: true })
        .withResponse();
      const events: any[] = [];
      for await (const event of stream) events.push(event);

      const deltas = events.filter((event) => event.type === "response.output_text.delta");
      expect(deltas.map((event) => event.delta).join("")).toBe(ANSWER);
      expect(new Set(deltas.map((event) => event.item_id)).size).toBe(1);
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      const created = events[0];
      const completed = events.at(-1);
      expect(created.type).toBe("response.created");
      expect(completed.type).toBe("response.completed");
      expect(completed.response.id).toBe(created.response.id);
      expect(completed.response.output_text).toBe(ANSWER);
      expect(completed.response.output.at(-1).id).toBe(deltas[0].item_id);
      expect(events.filter((event) => event.type === "response.output_item.added")).toHaveLength(1);
      expect(completed.response.usage.input_tokens).toBeGreaterThan(PROMPT_TOKENS);
      expect(completed.gateway_continuation).toMatchObject({ by: { provider: PROVIDERS[next] } });

      const log = await logOf(response.headers.get("x-gateway-trace-id")!);
      expect(log.attempts.map((attempt: any) => attempt.stream)).toEqual(["broke", "continued"]);
      expect(log.cost).toBeCloseTo(log.attempts[0].cost + log.attempts[1].cost, 12);
    });
  }
});

describe("Messages: the same message and text block go on", () => {
  const cases: Array<[Shape, Fault, Shape]> = [
    ["anthropic", "cut", "openai"],
    ["openai", "malformed", "anthropic"],
    ["gemini", "error", "anthropic"],
  ];
  for (const [shape, fault, next] of cases) {
    it(`${shape} ${fault} (${shape === "anthropic" ? "native" : "translated"}), continued by ${next}`, async () => {
      const anthropic = new Anthropic({
        apiKey: "unused",
        baseURL: gateway.url,
        defaultHeaders: {
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": JSON.stringify(continuing(target(shape, fault), target(next, "ok"))),
        },
        maxRetries: 0,
      });
      const stream = anthropic.messages.stream({
        model: "any",
        max_tokens: 256,
        messages: [{ role: "user", content: "Say the pangram." }],
      });
      const events: any[] = [];
      stream.on("streamEvent", (event) => events.push(event));
      const message = await stream.finalMessage();

      expect(message.content).toEqual([expect.objectContaining({ type: "text", text: ANSWER })]);
      expect(message.stop_reason).toBe("end_turn");
      expect(events.filter((event) => event.type === "message_start")).toHaveLength(1);
      expect(events.filter((event) => event.type === "content_block_start")).toHaveLength(1);
      expect(events.filter((event) => event.type === "message_stop")).toHaveLength(1);
      expect(events.at(-1).gateway_continuation).toMatchObject({ by: { provider: PROVIDERS[next] } });
      expect(message.usage.output_tokens).toBeGreaterThan(0);
    });
  }
});

describe("what is not continued", () => {
  it("off by default: the stream ends with the error and the log with the failure, the next target unasked", async () => {
    const before = upstream.bodies("anthropic", "ok").length;
    const config = { strategy: { mode: "fallback" }, targets: [target("openai", "cut"), target("anthropic", "ok")] };
    const { data: stream, response } = await client(config)
      .chat.completions.create({ model: "any", messages: [{ role: "user", content: "Hi" }], stream: true })
      .withResponse();
    const error = await readChat(stream).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(upstream.bodies("anthropic", "ok").length).toBe(before);
    const log = await logOf(response.headers.get("x-gateway-trace-id")!);
    expect(log.status).toBe(502);
    expect(log.continuation).toBeUndefined();
  });

  it("a tool call half-streamed is not continued: the stream ends with the error", async () => {
    const before = upstream.bodies("openai", "ok").length;
    const config = continuing(target("anthropic", "tool"), target("openai", "ok"));
    const stream = await client(config).chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "Look it up." }],
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } }],
      stream: true,
    });
    const error = await readChat(stream).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(upstream.bodies("openai", "ok").length).toBe(before);
  });

  it("a continuation that breaks too is continued by the target after it; with none left, the error ends it", async () => {
    const config = continuing(target("gemini", "cut"), target("openai", "error"), target("anthropic", "ok"));
    const { data: stream, response } = await client(config)
      .chat.completions.create({ model: "any", messages: [{ role: "user", content: "Hi" }], stream: true })
      .withResponse();
    const { text, finishes, chunks } = await readChat(stream);
    // The second leg said "The quick bro" again after the first's "The quick bro": it was cut as a repeat.
    expect(text).toBe(ANSWER);
    expect(finishes).toEqual(["stop"]);
    expect(chunks.at(-1).gateway_continuation.by.target).toBe("config.targets[2]");
    const log = await logOf(response.headers.get("x-gateway-trace-id")!);
    expect(log.attempts.map((attempt: any) => attempt.stream)).toEqual(["broke", "broke", "continued"]);

    const none = continuing(target("openai", "cut"), target("anthropic", "cut"));
    const alone = await client(none).chat.completions.create({
      model: "any",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
    });
    const error = await readChat(alone).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
  });

  it("the option is validated: fallback only, `error` or `continue`", async () => {
    const bad = async (strategy: object) => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": JSON.stringify({ strategy, targets: [target("openai", "ok")] }),
        },
        body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "Hi" }], stream: true }),
      });
      const text = await response.text();
      return { status: response.status, body: response.status === 200 ? text : JSON.parse(text) };
    };
    const loadbalance = await bad({ mode: "loadbalance", on_stream_failure: "continue" });
    expect(loadbalance.status).toBe(400);
    expect(loadbalance.body.error.param).toBe("x-gateway-config.strategy.on_stream_failure");
    expect((await bad({ mode: "fallback", on_stream_failure: "resume" })).status).toBe(400);
    expect((await bad({ mode: "fallback", onStreamFailure: "continue" })).status).toBe(200);
  });
});

describe("limits settle both legs", () => {
  it("a token and a cost budget count what both legs used", async () => {
    const workspace = await seedWorkspace(gateway, "Continuation limits");
    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "continuation key",
      workspace_id: workspace.id,
    });
    const policy = (type: string) =>
      api("POST", "/v2/policies/usage-limits", {
        conditions: [{ key: "api_key", value: key.id }],
        type,
        credit_limit: 1_000_000,
      });
    const tokens = (await policy("tokens")).body.id;
    const cost = (await policy("cost")).body.id;
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-gateway-api-key": key.key,
        "x-gateway-config": JSON.stringify(continuing(target("openai", "cut"), target("anthropic", "ok"))),
      },
      body: JSON.stringify({ model: "any", messages: [{ role: "user", content: "Hi" }], stream: true }),
    });
    expect(await response.text()).toContain("[DONE]");
    const log = await logOf(response.headers.get("x-gateway-trace-id")!);
    const counted = async (id: string, expected: number) => {
      let usage = 0;
      await expect
        .poll(
          async () => {
            usage = (await api("GET", `/v2/policies/usage-limits/${id}/usage`)).body.data?.[0]?.usage ?? 0;
            return usage;
          },
          { timeout: 10_000 },
        )
        .toBeGreaterThanOrEqual(expected - 1e-6);
      return usage;
    };
    expect(await counted(tokens, log.usage.totalTokens)).toBe(log.usage.totalTokens);
    expect(log.usage.totalTokens).toBe(log.attempts[0].usage.totalTokens + log.attempts[1].usage.totalTokens);
    expect(await counted(cost, log.cost)).toBeCloseTo(log.cost, 6);
  });
});

describe("a client that leaves during the continuation", () => {
  it("stops the continuing call; the request is logged once, as 499, with both legs", async () => {
    const controller = new AbortController();
    const config = continuing(target("anthropic", "cut"), target("openai", "slow"));
    const { data: stream, response } = await client(config)
      .chat.completions.create(
        { model: "any", messages: [{ role: "user", content: "Hi" }], stream: true },
        { signal: controller.signal },
      )
      .withResponse();
    let text = "";
    try {
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        // The continuation has begun: leave.
        if (text.length > "The quick bro".length) controller.abort();
      }
    } catch {
      // The SDK may report the abort.
    }
    expect(text.length).toBeLessThan(ANSWER.length);
    const log = await logOf(response.headers.get("x-gateway-trace-id")!);
    expect(log.status).toBe(499);
    expect(log.attempts.map((attempt: any) => attempt.stream)).toEqual(["broke", "continued"]);
  });
});
