import { randomBytes } from "node:crypto";
import { request } from "node:http";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type FaultUpstream, startFaultUpstream } from "../helpers/fault-upstream.ts";
import { apiCaller, type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { startMockServer } from "../helpers/mock-server.ts";

/**
 * Targets that fail without an upstream error answer: inside the gateway (a credential lookup that throws),
 * or with a 200 whose stream carries nothing usable. Both are failed targets: a fallback moves on, and when
 * nothing is left the client gets a 502 that says what happened, never an opaque 500 or an empty success.
 */

let upstream: FaultUpstream;
let dataDir: string;
let gateway: TestGateway;
const api = apiCaller(() => gateway);
const messages = [{ role: "user" as const, content: "Hi" }];
const INTEGRATION_KEY = "sk-integration-secret-5d1e0b7a93";

const target = (behaviour: string) => ({
  provider: "openai",
  api_key: "sk-target",
  custom_host: upstream.host(behaviour),
});

function clientWith(config: unknown): OpenAI {
  return new OpenAI({
    apiKey: "sk-client",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": JSON.stringify(config) },
    maxRetries: 0,
    timeout: 15_000,
  });
}

async function failure(promise: Promise<unknown>) {
  const error = await promise.then(() => undefined).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

async function lastLog(filter = "") {
  const { body } = await api("GET", `/v1/logs?limit=1${filter}`);
  return body.data[0];
}

beforeAll(async () => {
  upstream = await startFaultUpstream();
  dataDir = mkdtempSync(join(tmpdir(), "gateway-target-failures-"));
  gateway = await startTestGateway({ GATEWAY_DATA_DIR: dataDir });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("a target that fails inside the gateway", () => {
  it("is a failed target: fallback moves on; alone, the client gets a 502 naming the error (no secret)", async () => {
    const created = await api("POST", "/v1/integrations", {
      name: "Sealed",
      slug: "sealed",
      ai_provider_id: "openai",
      key: INTEGRATION_KEY,
      configurations: { custom_host: upstream.host("ok-integration") },
    });
    expect(created.status).toBe(201);
    // The master key is replaced (a data folder restored with another key): the integration's credentials no
    // longer open, so looking them up throws inside the gateway.
    const adminKey = gateway.adminKey;
    await gateway.gateway.close();
    writeFileSync(join(dataDir, "master.key"), `${randomBytes(32).toString("base64")}\n`);
    const restarted = await startTestGateway({ GATEWAY_DATA_DIR: dataDir });
    gateway = { ...restarted, adminKey };
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const fallback = clientWith({
        strategy: { mode: "fallback" },
        targets: [{ provider: "@sealed" }, target("ok-next")],
      });
      const answer = await fallback.chat.completions.create({ model: "gpt-4o-mini", messages }).withResponse();
      expect(answer.data.choices[0]!.message.content).toBe("next");
      expect(answer.response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
      // The answered request's log names the failed target and why it failed.
      const traceId = answer.response.headers.get("x-gateway-trace-id")!;
      await expect.poll(async () => (await lastLog(`&trace_id=${traceId}`))?.id, { timeout: 5000 }).toBeDefined();
      const { body: log } = await api("GET", `/v1/logs/${(await lastLog(`&trace_id=${traceId}`)).id}`);
      expect(log.attempts).toEqual([
        expect.objectContaining({
          targetPath: "config.targets[0]",
          status: 502,
          error: expect.stringMatching(/SecretDecryptionError/),
        }),
        expect.objectContaining({ targetPath: "config.targets[1]", status: 200 }),
      ]);
      expect(JSON.stringify(log)).not.toContain(INTEGRATION_KEY);

      const alone = await failure(
        clientWith({ provider: "@sealed" }).chat.completions.create({ model: "gpt-4o-mini", messages }),
      );
      expect(alone.status).toBe(502);
      expect(alone.code).toBe("gateway_target_error");
      expect(alone.message).toMatch(/failed while calling the provider: SecretDecryptionError: /);
      expect(JSON.stringify(alone.error)).not.toContain(INTEGRATION_KEY);
      await expect
        .poll(async () => (await lastLog("&status=502"))?.error?.code, { timeout: 5000 })
        .toBe("gateway_target_error");
      // The operator's log names it with its stack.
      expect(errors.mock.calls.some((call) => /target failed inside the gateway/.test(String(call[0])))).toBe(true);
    } finally {
      errors.mockRestore();
    }
  });
});

describe("a 200 stream with nothing usable in it", () => {
  for (const behaviour of ["stream-empty", "stream-html", "stream-nonjson"]) {
    it(`${behaviour}: fallback moves on; alone, 502 and logged as a failure`, async () => {
      const fallback = clientWith({ strategy: { mode: "fallback" }, targets: [target(behaviour), target("ok-next")] });
      const stream = await fallback.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true });
      let text = "";
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? "";
      expect(text).toBe("next");

      const alone = await failure(
        clientWith(target(behaviour)).chat.completions.create({ model: "gpt-4o-mini", messages, stream: true }),
      );
      expect(alone.status).toBe(502);
      expect(alone.code).toBe("invalid_upstream_stream");
      await expect
        .poll(async () => (await lastLog("&status=502"))?.error?.code, { timeout: 5000 })
        .toBe("invalid_upstream_stream");
    });
  }

  it("a stream of a transformed provider (Anthropic) that ends without an event is a 502 too", async () => {
    const empty = await startMockServer((_request, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end();
    });
    try {
      const anthropic = new OpenAI({
        apiKey: "sk-ant",
        baseURL: `${gateway.url}/v1`,
        defaultHeaders: {
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-provider": "anthropic",
          "x-gateway-custom-host": empty.url,
        },
        maxRetries: 0,
      });
      const error = await failure(
        anthropic.chat.completions.create({ model: "claude-sonnet-4-5", messages, stream: true }),
      );
      expect(error.status).toBe(502);
    } finally {
      await empty.close();
    }
  });
});

describe("a client that goes away", () => {
  it("mid-upload: logged as a client disconnect (499), not as an unhandled error", async () => {
    const errors = vi.spyOn(console, "error");
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
    try {
      const url = new URL(gateway.url);
      const upload = request({
        host: url.hostname,
        port: url.port,
        path: "/v1/chat/completions",
        method: "POST",
        headers: {
          "content-type": "application/json",
          "content-length": "1000",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": JSON.stringify(target("ok")),
        },
      });
      upload.on("error", () => {});
      upload.write('{"model": "gpt');
      await new Promise((resolve) => setTimeout(resolve, 200));
      upload.destroy();
      await expect.poll(async () => (await lastLog("&status=499"))?.status, { timeout: 5000 }).toBe(499);
      expect(errors.mock.calls.filter((call) => /unhandled error/.test(String(call[0])))).toEqual([]);
      expect(warnings.mock.calls.some((call) => /client closed the request/.test(String(call[0])))).toBe(true);
    } finally {
      errors.mockRestore();
      warnings.mockRestore();
    }
  });

  it("while the provider thinks: logged as 499", async () => {
    const controller = new AbortController();
    const pending = fetch(`${gateway.url}/v1/chat/completions`, {
      method: "POST",
      signal: controller.signal,
      headers: {
        "content-type": "application/json",
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-config": JSON.stringify(target("slow")),
      },
      body: JSON.stringify({ model: "gpt-4o-mini", messages }),
    }).catch(() => undefined);
    await expect.poll(() => upstream.hits("slow"), { timeout: 5000 }).toBeGreaterThan(0);
    controller.abort();
    await pending;
    await expect
      .poll(async () => (await lastLog("&status=499"))?.route, { timeout: 5000 })
      .toBe("/v1/chat/completions");
  });
});
