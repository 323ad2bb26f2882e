import OpenAI, { APIError } from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { guardrailStore } from "../../core/control/guardrails-store.ts";
import { call } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * Guardrails on long texts (docs/guardrails.md#long-texts-and-the-budget): 32 checks on a 5 MB prompt, written
 * inline, in a saved config and as an organisation default, never hold the gateway's event loop more than
 * 100 ms at a time, and the request gets the verdict its checks' settings give: the checks the request's budget
 * pays for judge the text (on a worker thread), the others follow `on_error`, and a check past its `timeout_ms`
 * is stopped. The gateway runs in this process, so the event loop measured is the gateway's (and the test's own
 * client's); the upstream answers without reading the prompt, so that none of its work is counted as the gateway's.
 */

let gateway: TestGateway;
let upstream: MockServer;

const FIVE_MB = 5 * 1024 * 1024;
const SENTENCE = "The quick brown fox jumps over the lazy dog near the river bank today. ";
const LONG_TEXT = SENTENCE.repeat(Math.ceil(FIVE_MB / SENTENCE.length)).slice(0, FIVE_MB);
const MAX_BLOCK_MS = 100;
/** At the default budget (32 Mi characters) six reads of the 5 MB text are paid for; the rest are over it. */
const PAID = Math.floor((32 * 1024 * 1024) / FIVE_MB);

/** A chat completion in OpenAI's shape (its API reference), whatever was asked. */
const COMPLETION = {
  id: "chatcmpl-long-text",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "gpt-4o-mini",
  choices: [{ index: 0, message: { role: "assistant", content: "Fine." }, finish_reason: "stop", logprobs: null }],
  usage: { prompt_tokens: 1_200_000, completion_tokens: 2, total_tokens: 1_200_002 },
};

beforeAll(async () => {
  [gateway, upstream] = await Promise.all([
    startTestGateway(),
    startMockServer((_request, res) => sendJson(res, 200, COMPLETION)),
  ]);
  // What a gateway loads once, on its first guardrail and its first upstream call (modules, the check thread),
  // is not what this file measures: one request over a middling text warms it.
  const warm = await ask(
    JSON.stringify({ ...target(), before_request_hooks: [wordCountGuardrail(10_000_000)] }),
    LONG_TEXT.slice(0, 200_000),
  );
  expect(warm.status).toBe(200);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

beforeEach(() => {
  upstream.requests.length = 0;
});

/**
 * 32 word counts in one guardrail, each a little different (none can be answered from another): with a small
 * `maxWords` they fail on the long text, with a large one they pass.
 */
function wordCountGuardrail(maxWords: number, actions: Record<string, unknown> = {}) {
  return {
    type: "guardrail",
    deny: true,
    // Time enough on a loaded machine: what the checks answer is the budget's doing, never the clock's.
    timeout_ms: 60_000,
    checks: Array.from({ length: 32 }, (_, index) => ({
      id: "default.wordCount",
      parameters: { minWords: index, maxWords: maxWords + index },
    })),
    ...actions,
  };
}

const target = () => ({ provider: "openai", custom_host: `${upstream.url}/v1` });

/**
 * The longest the event loop was held while `work` ran, in ms: a 1 ms timer probe notes, between two of its
 * ticks, the CPU time this thread spent (the gateway's event loop, and this test's client). That is the work that
 * held the loop; the wall time between ticks (`wallMs`, printed) also counts the time the machine's other
 * processes took the core, which on a shared machine says more about them than about the gateway.
 */
async function longestBlock<T>(work: () => Promise<T>): Promise<{ result: T; blockedMs: number; wallMs: number }> {
  let blockedMs = 0;
  let wallMs = 0;
  let lastCpu = threadCpuMs();
  let lastWall = performance.now();
  const probe = setInterval(() => {
    const cpu = threadCpuMs();
    const wall = performance.now();
    blockedMs = Math.max(blockedMs, cpu - lastCpu);
    wallMs = Math.max(wallMs, wall - lastWall);
    lastCpu = cpu;
    lastWall = wall;
  }, 1);
  try {
    const result = await work();
    return { result, blockedMs, wallMs };
  } finally {
    clearInterval(probe);
  }
}

function threadCpuMs(): number {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
}

/** Asks with the openai SDK; answers the status and the raw JSON body (the SDK keeps only `error` of a 446). */
async function ask(config: string, content = LONG_TEXT): Promise<{ status: number; body: any }> {
  let body: any;
  const openai = new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    timeout: 120_000,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": config },
    fetch: async (url, init) => {
      const response = await fetch(url, init);
      body = await response.clone().json();
      return response;
    },
  });
  try {
    const { response } = await openai.chat.completions
      .create({ model: "gpt-4o-mini", messages: [{ role: "user", content }] })
      .withResponse();
    return { status: response.status, body };
  } catch (error) {
    if (!(error instanceof APIError)) throw error;
    return { status: error.status!, body };
  }
}

/** The checks of the first input guardrail, as the answer's hook_results report them. */
const checksOf = (body: any): any[] => body.hook_results.before_request_hooks[0].checks;

/** The first PAID checks judged the text (verdict `judged`); the rest were over the budget (verdict `over`). */
function expectBudgetSplit(checks: any[], judged: boolean, over: boolean) {
  expect(checks).toHaveLength(32);
  for (const check of checks.slice(0, PAID)) {
    expect(check.error).toBeNull();
    expect(check).toMatchObject({ id: "default.wordCount", verdict: judged });
    expect(check.data.count).toBeGreaterThan(900_000);
  }
  for (const check of checks.slice(PAID)) {
    expect(check.error.message).toMatch(/^over the request's guardrail budget: it reads 5242880 characters/);
    expect(check.verdict).toBe(over);
  }
}

describe("32 checks on a 5 MB prompt", () => {
  it("inline config: denied as its checks say, the event loop never held over 100 ms", async () => {
    const config = JSON.stringify({ ...target(), before_request_hooks: [wordCountGuardrail(10)] });
    const { result, blockedMs, wallMs } = await longestBlock(() => ask(config));
    console.log(`inline config: event loop held at most ${blockedMs.toFixed(1)} ms (${wallMs.toFixed(1)} ms wall)`);
    expect(result.status).toBe(446);
    expect(result.body.error).toMatchObject({ type: "hooks_failed" });
    // The paid checks counted the words and failed; the others, over the budget, pass (on_error: open).
    expectBudgetSplit(checksOf(result.body), false, true);
    expect(upstream.requests).toHaveLength(0);
    expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
  });

  it("passing checks: the request reaches the provider, the event loop never held over 100 ms", async () => {
    const config = JSON.stringify({ ...target(), before_request_hooks: [wordCountGuardrail(10_000_000)] });
    const { result, blockedMs, wallMs } = await longestBlock(() => ask(config));
    console.log(
      `inline config, passing: event loop held at most ${blockedMs.toFixed(1)} ms (${wallMs.toFixed(1)} ms wall)`,
    );
    expect(result.status).toBe(200);
    expect(result.body.choices[0].message.content).toBe("Fine.");
    expect(upstream.requests[0]!.body.length).toBeGreaterThan(FIVE_MB);
    expectBudgetSplit(checksOf(result.body), true, true);
    expect(upstream.requests).toHaveLength(1);
    expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
  });

  it("on_error closed: a check over the budget fails, so passing checks are denied all the same", async () => {
    const config = JSON.stringify({
      ...target(),
      before_request_hooks: [wordCountGuardrail(10_000_000, { on_error: "closed" })],
    });
    const { result, blockedMs } = await longestBlock(() => ask(config));
    expect(result.status).toBe(446);
    expectBudgetSplit(checksOf(result.body), true, false);
    expect(checksOf(result.body)[PAID].explanation).toMatch(/could not run .*failed \(on_error: closed\)/);
    expect(upstream.requests).toHaveLength(0);
    expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
  });

  it("four such requests at once: each denied, the event loop never held over 100 ms", async () => {
    // Four requests share the threads: a check that waits past its time limit fails (on_error: closed) as one
    // that judged the text does, so each is denied however the threads' time was shared.
    const config = JSON.stringify({
      ...target(),
      before_request_hooks: [wordCountGuardrail(10, { on_error: "closed", timeout_ms: 5_000 })],
    });
    // Sent as one body serialised once: four SDK calls would serialise 20 MB on this event loop at once, which
    // is the test's work, not the gateway's.
    const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: LONG_TEXT }] });
    const post = async () => {
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer sk-upstream",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": config,
        },
        body,
      });
      return { status: response.status, body: await response.json() };
    };
    const { result, blockedMs, wallMs } = await longestBlock(() => Promise.all([post(), post(), post(), post()]));
    for (const answer of result) expect(checksOf(answer.body)).toHaveLength(32);
    console.log(`4 x 32 checks: event loop held at most ${blockedMs.toFixed(1)} ms (${wallMs.toFixed(1)} ms wall)`);
    expect(result.map((answer) => answer.status)).toEqual([446, 446, 446, 446]);
    expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
  });

  it("saved config: the same, named by its slug", async () => {
    const slug = `long-text-${Math.random().toString(36).slice(2, 8)}`;
    const saved = await call(gateway, gateway.adminKey, "POST", "/v1/configs", {
      name: "Long texts",
      slug,
      config: { ...target(), before_request_hooks: [wordCountGuardrail(10)] },
    });
    expect(saved.status, saved.text).toBe(201);
    const { result, blockedMs, wallMs } = await longestBlock(() => ask(slug));
    console.log(`saved config: event loop held at most ${blockedMs.toFixed(1)} ms (${wallMs.toFixed(1)} ms wall)`);
    expect(result.status).toBe(446);
    expectBudgetSplit(checksOf(result.body), false, true);
    expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
  });

  it("organisation default guardrail: the same for a request whose config has none", async () => {
    const organisationId = gateway.gateway.bootstrap.organisationId;
    const saved = await guardrailStore(gateway.gateway.services.stores.records).create(organisationId, {
      slug: `org-long-${Math.random().toString(36).slice(2, 8)}`,
      name: "Word limit",
      checks: wordCountGuardrail(10).checks,
      actions: { deny: true, async: false, soft_deny_200: false, on_error: "open", timeout_ms: 60_000 },
      status: "active",
    });
    const set = await call(gateway, gateway.adminKey, "PUT", "/v1/admin/organisation/defaults", {
      input_guardrails: [saved.id],
    });
    expect(set.status).toBe(200);
    try {
      const { result, blockedMs, wallMs } = await longestBlock(() => ask(JSON.stringify(target())));
      console.log(
        `organisation default: event loop held at most ${blockedMs.toFixed(1)} ms (${wallMs.toFixed(1)} ms wall)`,
      );
      expect(result.status).toBe(446);
      expectBudgetSplit(checksOf(result.body), false, true);
      expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
    } finally {
      await call(gateway, gateway.adminKey, "PUT", "/v1/admin/organisation/defaults", { input_guardrails: [] });
    }
  });

  it("timeout_ms stops a check judged on a thread; its verdict follows on_error", async () => {
    // Phone numbers on every line: libphonenumber needs about 3 s a megabyte of them, so judged whole these two
    // checks would hold the request over a minute; each has 200 ms.
    const line = "Call 555-123-4567 or 212 555 0199 now. ";
    const numbers = line.repeat(Math.ceil(FIVE_MB / line.length)).slice(0, FIVE_MB);
    const config = JSON.stringify({
      ...target(),
      before_request_hooks: [
        {
          type: "guardrail",
          deny: true,
          on_error: "closed",
          timeout_ms: 200,
          checks: [
            { id: "default.pii", parameters: { categories: ["PHONE_NUMBER"] } },
            { id: "default.pii", parameters: { categories: ["PHONE_NUMBER", "EMAIL_ADDRESS"] } },
          ],
        },
      ],
    });
    const started = performance.now();
    const { result, blockedMs } = await longestBlock(() => ask(config, numbers));
    expect(result.status).toBe(446);
    for (const check of checksOf(result.body)) {
      expect(check).toMatchObject({ verdict: false, error: { message: "timed out after 200 ms" } });
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(blockedMs).toBeLessThan(MAX_BLOCK_MS);
  });
});

describe("a smaller budget (GATEWAY_GUARDRAIL_BUDGET_CHARS)", () => {
  let small: TestGateway;
  beforeAll(async () => {
    small = await startTestGateway({ GATEWAY_GUARDRAIL_BUDGET_CHARS: "100000" });
  });
  afterAll(async () => small?.close());

  it("pays for checks in the order written; cheap ones still run once it is spent", async () => {
    const text = "word ".repeat(12_000); // 60,000 characters: one read fits the budget, the second does not
    const response = await fetch(`${small.url}/v1/chat/completions`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: "Bearer sk-upstream",
        "x-gateway-api-key": small.adminKey,
        "x-gateway-config": JSON.stringify({
          ...target(),
          input_guardrails: [
            {
              "default.wordCount": { maxWords: 20_000 },
              "default.regexMatch": { rule: "^(word )+$" },
              "default.modelWhitelist": { models: ["gpt-4o-mini"] },
              on_error: "closed",
              deny: true,
            },
          ],
        }),
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: text }] }),
    });
    expect(response.status).toBe(446);
    const [count, regex, model] = checksOf(await response.json());
    expect(count).toMatchObject({ id: "default.wordCount", verdict: true, data: { count: 12_000 } });
    expect(regex).toMatchObject({ id: "default.regexMatch", verdict: false });
    expect(regex.error.message).toBe(
      "over the request's guardrail budget: it reads 60000 characters and 40000 of 100000 were left",
    );
    // Reads only the model: costs nothing, runs whatever is left.
    expect(model).toMatchObject({ id: "default.modelWhitelist", verdict: true });
    expect(model.error).toBeNull();
  });
});
