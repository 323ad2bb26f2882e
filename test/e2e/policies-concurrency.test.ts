import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costOf } from "../../core/inference/catalog/cost.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Token and cost usage limits under concurrency, end to end: 200 requests at once (streams, JSON answers, both)
 * against a 1,000-token limit and a $1 limit. Each admitted request reserves its estimated usage before the call
 * and settles the real usage after, so what is used past the limit stays within one request's worth; and every
 * reservation is settled exactly once (the counter ends equal to the real usage) on every path: success, upstream
 * failure, fallback, a stream failing midway, a client closing its stream.
 */

const CONCURRENCY = 200;
/** The mock's answer: 100 words, so 100 completion tokens; the prompt is 2 (the mock counts words). */
const REPLY = Array.from({ length: 100 }, (_, index) => `w${index}`).join(" ");
const PROMPT = [{ role: "user", content: "Say hello" }];

let gateway: TestGateway;
let upstream: OpenAIMock;
let workspaceId: string;

beforeAll(async () => {
  // A pause between chunks keeps every stream open while the others are admitted.
  upstream = await startOpenAIMock({ reply: REPLY, chunkDelayMs: 1 });
  gateway = await startTestGateway();
  workspaceId = (await seedWorkspace(gateway, "Limits")).id;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const admin = (method: string, path: string, body?: unknown) => call(gateway, gateway.adminKey, method, path, body);

async function keyWithLimit(limit: { type: "tokens" | "cost"; credit_limit: number }) {
  const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
    name: "limits test key",
    workspace_id: workspaceId,
  });
  const policy = await admin("POST", "/v2/policies/usage-limits", {
    name: `${limit.type} limit`,
    conditions: [{ key: "api_key", value: key.id }],
    group_by: [{ key: "api_key" }],
    periodic_reset: "daily",
    ...limit,
  });
  expect(policy.status).toBe(201);
  return { key: key.key, path: `/v2/policies/usage-limits/${policy.body.id}` };
}

interface Answer {
  status: number;
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  text: string;
}

interface ChatOptions {
  stream?: boolean;
  model?: string;
  maxTokens?: number;
  config?: unknown;
}

async function chat(key: string, options: ChatOptions = {}): Promise<Answer> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "x-gateway-api-key": key,
  };
  if (options.config) headers["x-gateway-config"] = JSON.stringify(options.config);
  else {
    headers["x-gateway-provider"] = "openai";
    headers.authorization = "Bearer sk-upstream";
    headers["x-gateway-custom-host"] = `${upstream.url}/v1`;
  }
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      model: options.model ?? "gpt-4o-mini",
      messages: PROMPT,
      ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
      ...(options.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
  });
  const text = await response.text();
  if (response.status !== 200) return { status: response.status, text };
  if (!options.stream) return { status: 200, usage: JSON.parse(text).usage, text };
  const usageLine = text
    .split("\n")
    .filter((line) => line.startsWith("data: {") && line.includes('"usage"'))
    .map((line) => JSON.parse(line.slice(6)))
    .find((chunk) => chunk.usage);
  return { status: 200, usage: usageLine?.usage, text };
}

/** The policy's counter for the key's group, once it stops moving (usage is settled after the response). */
async function settledUsage(path: string): Promise<number> {
  let last = Number.NaN;
  for (let round = 0; round < 200; round++) {
    const answer = await admin("GET", `${path}/usage`);
    const value = answer.body.data?.[0]?.usage ?? 0;
    if (value === last) return value;
    last = value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return last;
}

async function concurrently(count: number, run: (index: number) => Promise<Answer>): Promise<Answer[]> {
  return Promise.all(Array.from({ length: count }, (_, index) => run(index)));
}

function summary(answers: Answer[]) {
  const admitted = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status === 429);
  expect(admitted.length + refused.length).toBe(answers.length);
  for (const answer of admitted) expect(answer.usage).toBeDefined();
  return { admitted, refused };
}

describe("usage limits under 200 concurrent requests", () => {
  it("keeps 200 concurrent streams within one request's tokens of a 1,000-token limit", async () => {
    const { key, path } = await keyWithLimit({ type: "tokens", credit_limit: 1000 });
    const answers = await concurrently(CONCURRENCY, () => chat(key, { stream: true, maxTokens: 150 }));
    const { admitted, refused } = summary(answers);
    const used = admitted.reduce((sum, answer) => sum + answer.usage!.total_tokens, 0);
    const perRequest = admitted[0]!.usage!.total_tokens;
    console.info(
      `tokens, 200 concurrent streams: ${admitted.length} admitted, used ${used} of 1000 (overshoot ${Math.max(0, used - 1000)}, one request ${perRequest})`,
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(used - 1000).toBeLessThanOrEqual(perRequest);
    // The counter ends at exactly the real usage: every reservation was settled once.
    expect(await settledUsage(path)).toBe(used);
  });

  it("keeps 200 concurrent requests (streams and JSON) within one request's cost of a $1 limit", async () => {
    const { key, path } = await keyWithLimit({ type: "cost", credit_limit: 1 });
    upstream.setFault({ delayMs: 50 }); // JSON answers stay in flight while the others are admitted too
    let answers: Answer[];
    try {
      answers = await concurrently(CONCURRENCY, (index) =>
        chat(key, { stream: index % 2 === 0, model: "o1-pro", maxTokens: 150 }),
      );
    } finally {
      upstream.setFault(undefined);
    }
    const { admitted, refused } = summary(answers);
    const costs = admitted.map((answer) => costOf("openai", "o1-pro", answer.usage!).total);
    const spent = costs.reduce((sum, cost) => sum + cost, 0);
    const perRequest = Math.max(...costs);
    console.info(
      `cost, 200 concurrent (100 streams, 100 JSON): ${admitted.length} admitted, spent $${spent.toFixed(4)} of $1 (overshoot $${Math.max(0, spent - 1).toFixed(4)}, one request $${perRequest.toFixed(4)})`,
    );
    expect(refused.length).toBeGreaterThan(0);
    expect(spent - 1).toBeLessThanOrEqual(perRequest + 1e-6);
    expect(await settledUsage(path)).toBeCloseTo(spent, 5);
  });

  it("reserves the model's default output when max_tokens is absent, and stays within one request", async () => {
    const { key, path } = await keyWithLimit({ type: "tokens", credit_limit: 1000 });
    const answers = await concurrently(CONCURRENCY, (index) => chat(key, { stream: index % 2 === 1 }));
    const { admitted } = summary(answers);
    const used = admitted.reduce((sum, answer) => sum + answer.usage!.total_tokens, 0);
    console.info(`tokens, no max_tokens: ${admitted.length} admitted, used ${used} of 1000`);
    expect(used - 1000).toBeLessThanOrEqual(admitted[0]!.usage!.total_tokens);
    expect(await settledUsage(path)).toBe(used);
  });
});

describe("settling reservations on every path", () => {
  /** A 1,000,000-token limit: nothing is refused, the counter shows what each path leaves behind. */
  const roomyKey = () => keyWithLimit({ type: "tokens", credit_limit: 1_000_000 });
  const target = { provider: "openai", api_key: "sk-upstream", custom_host: "" };
  beforeAll(() => {
    target.custom_host = `${upstream.url}/v1`;
  });

  it("counts exactly the real usage of a JSON answer and of a stream", async () => {
    const { key, path } = await roomyKey();
    const json = await chat(key, { maxTokens: 150 });
    const stream = await chat(key, { stream: true, maxTokens: 150 });
    expect(await settledUsage(path)).toBe(json.usage!.total_tokens + stream.usage!.total_tokens);
  });

  it("releases the whole reservation when the provider fails", async () => {
    const { key, path } = await roomyKey();
    upstream.setFault({ status: 500 });
    try {
      expect((await chat(key, { maxTokens: 150 })).status).toBe(500);
      expect((await chat(key, { stream: true, maxTokens: 150 })).status).toBe(500);
    } finally {
      upstream.setFault(undefined);
    }
    expect(await settledUsage(path)).toBe(0);
  });

  it("settles once across a fallback and across retries", async () => {
    const { key, path } = await roomyKey();
    upstream.setFault({ status: 500, times: 1 });
    const fallback = await chat(key, {
      maxTokens: 150,
      config: { strategy: { mode: "fallback" }, targets: [target, target] },
    });
    expect(fallback.status).toBe(200);
    upstream.setFault({ status: 500, times: 2 });
    const retried = await chat(key, {
      stream: true,
      maxTokens: 150,
      config: { retry: { attempts: 3, on_status_codes: [500] }, ...target },
    });
    upstream.setFault(undefined);
    expect(retried.status).toBe(200);
    expect(await settledUsage(path)).toBe(fallback.usage!.total_tokens + retried.usage!.total_tokens);
  });

  it("settles a stream that fails midway with the usage of what was sent", async () => {
    const { key, path } = await roomyKey();
    upstream.setFault({ streamFailAfter: 10 });
    try {
      const answer = await chat(key, { stream: true, maxTokens: 150 });
      expect(answer.status).toBe(200);
      expect(answer.text).toContain('"error"');
    } finally {
      upstream.setFault(undefined);
    }
    // The gateway counts the prompt and the words it relayed (the tokenizer yields to the event loop, so the
    // settlement may land a little after the stream ends): more than nothing, less than the reservation.
    await expect.poll(() => settledUsage(path), { timeout: 5_000 }).toBeLessThan(150);
    expect(await settledUsage(path)).toBeGreaterThan(0);
  });

  it("settles a stream the client closes midway", async () => {
    const { key, path } = await roomyKey();
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      signal: controller.signal,
      headers: {
        "content-type": "application/json",
        "x-gateway-api-key": key,
        "x-gateway-provider": "openai",
        authorization: "Bearer sk-upstream",
        "x-gateway-custom-host": `${upstream.url}/v1`,
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: PROMPT, max_tokens: 150, stream: true }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.closed.catch(() => undefined);
    // What the reservation held (prompt estimate + 150) is given back down to what was used before the close.
    await expect.poll(() => settledUsage(path), { timeout: 5_000 }).toBeLessThan(100);
    expect(await settledUsage(path)).toBeGreaterThan(0);
  });
});

describe("settling when the client leaves before the answer", () => {
  it("releases the reservation of a request the client abandons while it waits", async () => {
    const { key, path } = await keyWithLimit({ type: "tokens", credit_limit: 1_000_000 });
    upstream.setFault({ delayMs: 300, times: 1 });
    const abandoned = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      signal: AbortSignal.timeout(100),
      headers: {
        "content-type": "application/json",
        "x-gateway-api-key": key,
        "x-gateway-provider": "openai",
        authorization: "Bearer sk-upstream",
        "x-gateway-custom-host": `${upstream.url}/v1`,
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: PROMPT, max_tokens: 150 }),
    });
    await expect(abandoned).rejects.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await settledUsage(path)).toBe(0);
  });
});
