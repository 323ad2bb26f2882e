import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildRealtimeService } from "../../scripts/build.ts";
import { type AwsGateway, startAwsGateway } from "../helpers/aws-gateway.ts";
import { lambdaEnv } from "../helpers/aws-stores.ts";
import { openRealtime } from "../helpers/realtime-client.ts";
import { REALTIME_KEY, type RealtimeMock, startRealtimeMock } from "../mocks/openai-realtime.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import WebSocket from "ws";

/**
 * What AWS runs for realtime: the container service's bundle (scripts/build.ts buildRealtimeService, as the
 * Dockerfile builds it), started as its own Node process from a folder with no node_modules, with the AWS
 * stores on the emulators (the environment infra/ gives it). It answers its health check and relays a session
 * whose key, and whose log, live in the same DynamoDB table the functions use (read back through the API).
 */

let dir: string;
let child: ChildProcess;
let serviceUrl: string;
let gateway: AwsGateway;
let upstream: RealtimeMock;
let responsesUpstream: OpenAIMock;

beforeAll(async () => {
  const emulators = inject("emulators");
  upstream = await startRealtimeMock();
  responsesUpstream = await startOpenAIMock();
  gateway = await startAwsGateway(emulators);
  dir = mkdtempSync(join(tmpdir(), "realtime-service-"));
  const bundle = await buildRealtimeService(dir);
  child = spawn(process.execPath, [bundle], {
    cwd: dir,
    env: {
      PATH: process.env.PATH,
      ...lambdaEnv(emulators, gateway.services.settings.GATEWAY_TABLE!),
      PORT: "0",
      HOST: "127.0.0.1",
      TRUSTED_CUSTOM_HOSTS: "127.0.0.1",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (chunk) => {
    stderr += chunk;
  });
  serviceUrl = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once("exit", (code) => reject(new Error(`the service exited (${code}): ${stderr}`)));
  });
}, 60_000);

afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill("SIGTERM");
    await exited;
  }
  await gateway?.close();
  await upstream?.close();
  await responsesUpstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the realtime container service", () => {
  it("answers its load balancer's health check", async () => {
    const response = await fetch(`${serviceUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ok" });
    expect((await fetch(`${serviceUrl}/v1/chat/completions`)).status).toBe(404);
  });

  it("relays a session with a key from the shared table and writes its log there", async () => {
    const traceId = `rt-service-${Date.now()}`;
    const client = await openRealtime(`${serviceUrl.replace(/^http/, "ws")}/v1/realtime?model=gpt-realtime`, {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      "x-gateway-trace-id": traceId,
      authorization: `Bearer ${REALTIME_KEY}`,
    });
    await client.next("session.created");
    client.send({ type: "response.create" });
    expect((await client.next("response.done")).response.usage.total_tokens).toBe(300);
    client.ws.close(1000);
    await client.closed;

    const headers = { "x-gateway-api-key": gateway.adminKey };
    const logOf = async () => {
      const list = await (await fetch(`${gateway.url}/v1/logs?trace_id=${traceId}`, { headers })).json();
      const id = list.data?.[0]?.id;
      return id ? (await fetch(`${gateway.url}/v1/logs/${id}`, { headers })).json() : undefined;
    };
    await expect.poll(logOf, { timeout: 10_000 }).toBeDefined();
    expect(await logOf()).toMatchObject({ status: 101, provider: "openai", usage: { totalTokens: 300 } });

    const refused = await openRealtime(`${serviceUrl.replace(/^http/, "ws")}/v1/realtime?model=gpt-realtime`, {
      "x-gateway-provider": "openai",
    }).catch((error) => error);
    expect(refused.status).toBe(401);
  });

  it.each(["/v1/responses", "/v1/realtime/responses"])(
    "serves the Responses WebSocket mode on %s, each turn stored in the shared table before its last event",
    async (path) => {
      const socket = new WebSocket(`${serviceUrl.replace(/^http/, "ws")}${path}`, {
        headers: {
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-provider": "openai",
          "x-gateway-custom-host": `${responsesUpstream.url}/v1`,
          authorization: "Bearer sk-provider",
        },
      });
      const frames: any[] = [];
      socket.on("message", (data) => frames.push(JSON.parse(String(data))));
      await new Promise((resolve, reject) => {
        socket.once("open", resolve);
        socket.once("error", reject);
      });
      socket.send(JSON.stringify({ type: "response.create", model: "gpt-4o-mini", input: "Hi" }));
      await expect.poll(() => frames.at(-1)?.type, { timeout: 10_000 }).toBe("response.completed");
      const id = frames.at(-1).response.id;
      socket.close();
      // Read at once through the functions' API: the container stored it in the same table and bucket.
      const stored = await fetch(`${gateway.url}/v1/responses/${id}`, {
        headers: { "x-gateway-api-key": gateway.adminKey },
      });
      expect(stored.status).toBe(200);
      expect(((await stored.json()) as { id: string }).id).toBe(id);
    },
  );
});
