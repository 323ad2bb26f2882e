import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type MockServer, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * Inputs that used to hurt the gateway (issue 19): each answers a clear 4xx, or passes on exactly, and the
 * event loop stays free for other tenants.
 */

/** A conditional rule `{query, then}`. */
// biome-ignore lint/suspicious/noThenProperty: `then` is the config format's name for the chosen target.
const when = (query: unknown, target: string) => ({ query, then: target });

let upstream: MockServer;
let gateway: TestGateway;
const HEADER_LIMIT = 64 * 1024;

beforeAll(async () => {
  upstream = await startMockServer((req, res) => {
    const text = req.body.toString("utf8");
    const body = JSON.parse(text);
    // A custom host that reports no usage, answering with the prompt: the gateway must count the tokens itself.
    const prompt = String(body.messages?.at(-1)?.content ?? "");
    sendJson(res, 200, {
      id: "chatcmpl-1",
      object: "chat.completion",
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content: prompt }, finish_reason: "stop" }],
    });
  });
  gateway = await startTestGateway({ GATEWAY_MAX_HEADER_BYTES: String(HEADER_LIMIT), GATEWAY_MAX_JSON_DEPTH: "64" });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return {
    "content-type": "application/json",
    authorization: "Bearer sk-test",
    "x-gateway-api-key": gateway.adminKey,
    "x-gateway-provider": "openai",
    "x-gateway-custom-host": `${upstream.url}/v1`,
    ...extra,
  };
}

async function chat(body: string, extra: Record<string, string> = {}) {
  const response = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: headers(extra),
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, json, text };
}

/** A POST through node:http, which sends headers of any size (fetch refuses large ones). */
function rawPost(
  target: TestGateway,
  sent: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${target.url}/v1/chat/completions`, { method: "POST", headers: sent }, (res) => {
      let text = "";
      res.on("data", (chunk) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode!, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The longest time the event loop went without turning while `work` ran (this process hosts the gateway). */
async function longestBlock(work: () => Promise<unknown>): Promise<number> {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  await work();
  clearInterval(timer);
  return longest;
}

describe("hostile input", () => {
  it("counts the tokens of a long run of one character without freezing the event loop", async () => {
    // Before: 8 KB of 'a' with no usage from the provider blocked every tenant for seconds.
    // The first count loads the encoder's rank table (once per process): not what is measured here.
    expect(
      (await chat(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "warm" }] }))).status,
    ).toBe(200);
    const run = "a".repeat(256 * 1024);
    let result: Awaited<ReturnType<typeof chat>> | undefined;
    const blocked = await longestBlock(async () => {
      result = await chat(JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: run }] }));
    });
    expect(result!.status).toBe(200);
    expect(result!.json.choices[0].message.content).toHaveLength(run.length);
    expect(blocked).toBeLessThan(250);
  });

  it("answers 400 to a body nested deeper than GATEWAY_MAX_JSON_DEPTH (content, extra fields, tool parameters)", async () => {
    const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;
    const bodies = [
      `{"model":"gpt-4o","messages":[{"role":"user","content":${deep(10_000)}}]}`,
      `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"extra":${deep(10_000)}}`,
      `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"a":${'{"a":'.repeat(5_000)}1${"}".repeat(5_000)}}}}]}`,
    ];
    for (const body of bodies) {
      const { status, json } = await chat(body);
      expect(status).toBe(400);
      expect(json.error.code).toBe("json_too_deep");
      expect(json.error.message).toMatch(/deeper than the limit of 64/);
    }
    // Within the limit: accepted.
    const { status } = await chat(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"extra":${deep(50)}}`);
    expect(status).toBe(200);
  });

  it("answers 400 to a model name longer than 256 characters", async () => {
    const { status, json } = await chat(
      JSON.stringify({ model: "m".repeat(5 * 1024 * 1024), messages: [{ role: "user", content: "hi" }] }),
    );
    expect(status).toBe(400);
    expect(json.error.param).toBe("model");
  });

  it("refuses a timeout above 2^31-1 ms (it used to fire at once and answer 408)", async () => {
    const body = JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    const header = await chat(body, { "x-gateway-request-timeout": String(2 ** 31) });
    expect(header.status).toBe(400);
    expect(header.json.error.param).toBe("x-gateway-request-timeout");
    const config = await chat(body, {
      "x-gateway-config": JSON.stringify({
        request_timeout: 2 ** 31,
        provider: "openai",
        custom_host: `${upstream.url}/v1`,
      }),
    });
    expect(config.status).toBe(400);
    expect(config.json.error.message).toMatch(/request_timeout/);
    const fine = await chat(body, { "x-gateway-request-timeout": String(2 ** 31 - 1) });
    expect(fine.status).toBe(200);
  });

  it("passes a 64-bit seed to the provider digit for digit, and refuses one outside the range", async () => {
    for (const seed of ["9223372036854775807", "-9223372036854775808", "9007199254740993"]) {
      const before = upstream.requests.length;
      const { status } = await chat(`{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"seed":${seed}}`);
      expect(status).toBe(200);
      expect(upstream.requests[before]!.body.toString("utf8")).toContain(`"seed":${seed}`);
    }
    for (const seed of ["9223372036854775808", "-9223372036854775809", "1e30", "1.5"]) {
      const { status, json } = await chat(
        `{"model":"gpt-4o","messages":[{"role":"user","content":"hi"}],"seed":${seed}}`,
      );
      expect(status, seed).toBe(400);
      expect(json.error.param).toBe("seed");
    }
  });

  it("accepts an inline config of 1,000 conditional targets, and answers 431 JSON above the header limit", async () => {
    const targets = Array.from({ length: 1_000 }, (_, index) => ({ name: `t${index}`, provider: "openai" }));
    const conditions = [when({ "params.model": { $eq: "never" } }, "t1")];
    const config = JSON.stringify({
      strategy: { mode: "conditional", conditions, default: "t0" },
      custom_host: `${upstream.url}/v1`,
      targets,
    });
    expect(config.length).toBeGreaterThan(30_000);
    expect(config.length).toBeLessThan(HEADER_LIMIT - 4_000);
    const body = JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    const ok = await chat(body, { "x-gateway-config": config });
    expect(ok.status).toBe(200);

    // Over the limit: a 431 with a message (node:http's own answer is a bare 431, or a reset connection).
    const answer = await rawPost(gateway, headers({ "x-gateway-config": config.repeat(2) }), body);
    expect(answer.status).toBe(431);
    const error = JSON.parse(answer.text).error;
    expect(error.code).toBe("request_headers_too_large");
    expect(error.message).toMatch(/GATEWAY_MAX_HEADER_BYTES/);
  });

  it("by default (GATEWAY_MAX_HEADER_BYTES 512 KB) admits the largest inline config spec 8 allows, with keys and conditions", async () => {
    const defaults = await startTestGateway();
    try {
      const apiKey = `sk-proj-${"A".repeat(156)}`;
      const targets = Array.from({ length: 1_000 }, (_, index) => ({
        name: `target-${index}`,
        provider: "openai",
        api_key: apiKey,
        override_params: { model: "gpt-4o-mini" },
      }));
      const conditions = targets.map((target, index) =>
        when({ "metadata.tier": { $eq: `tier-${index}` } }, target.name),
      );
      const config = JSON.stringify({
        strategy: { mode: "conditional", conditions, default: "target-0" },
        custom_host: `${upstream.url}/v1`,
        targets,
      });
      // Above the 256 KB the default once was, below the 512 KB it is.
      expect(config.length).toBeGreaterThan(300 * 1024);
      expect(config.length).toBeLessThan(512 * 1024 - 8 * 1024);
      const body = JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
      const sent = { ...headers({ "x-gateway-config": config }), "x-gateway-api-key": defaults.adminKey };
      const ok = await rawPost(defaults, sent, body);
      expect(ok.status, ok.text.slice(0, 300)).toBe(200);
      const over = await rawPost(defaults, { ...sent, "x-gateway-config": `${config}${" ".repeat(200 * 1024)}` }, body);
      expect(over.status).toBe(431);
      expect(JSON.parse(over.text).error.message).toContain(`limit of ${512 * 1024} bytes`);
    } finally {
      await defaults.close();
    }
  });

  it("answers a pathological config $regex at once", async () => {
    const config = JSON.stringify({
      strategy: {
        mode: "conditional",
        conditions: [when({ "params.model": { $regex: "^(a+)+$" } }, "t")],
        default: "t",
      },
      targets: [{ name: "t", provider: "openai", custom_host: `${upstream.url}/v1` }],
    });
    const started = performance.now();
    const { status } = await chat(
      JSON.stringify({ model: `${"a".repeat(200)}!`, messages: [{ role: "user", content: "hi" }] }),
      { "x-gateway-config": config },
    );
    expect(status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("answers 4xx, not 500, to names of Object.prototype members and to a model whose toString throws", async () => {
    // Before: /analytics/graphs/__proto__ found Object.prototype as a metric, and the passthrough route called
    // String() on a model object whose toString was not a function: both answered 500.
    for (const name of ["__proto__", "constructor", "toString"]) {
      for (const path of [`/v1/analytics/graphs/${name}`, `/v1/analytics/groups/${name}`]) {
        const response = await fetch(`${gateway.url}${path}`, { headers: { "x-gateway-api-key": gateway.adminKey } });
        expect(response.status, path).toBeGreaterThanOrEqual(400);
        expect(response.status, path).toBeLessThan(500);
      }
    }
    const response = await fetch(`${gateway.url}/v1/proxy/v1/chat/completions`, {
      method: "POST",
      headers: headers(),
      body: '{"model":[{"toString":false}],"messages":[]}',
    });
    expect(response.status).toBe(200);
  });
});
