import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServer } from "../../core/mcp/records.ts";
import { call } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import {
  type HugeAgent,
  type HugeAnswer,
  type HugeMcpUpstream,
  startHugeAgent,
  startHugeMcpUpstream,
  writeHugeAnswer,
} from "../helpers/huge-upstreams.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";

/**
 * Upstream answers the gateway buffers are bounded (issue 38): a 400 MB MCP tool result, streamed by the mock
 * from one reused buffer, is cut at MCP_MAX_RESPONSE_BYTES and answered 502 `upstream_response_too_large`,
 * while /health keeps answering and the process's memory stays near where it was (before: 2.75 GB and a 5.7 s
 * stall). The same for an A2A agent's answer (AGENT_MAX_RESPONSE_BYTES) and a provider's JSON answer
 * (GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES, set low here). The gateway runs in this process, so its RSS is this
 * process's.
 */

const HUGE = 400 * 1024 * 1024;
const MB = 1024 * 1024;
let gateway: TestGateway;
let upstream: HugeMcpUpstream;
let server: McpServer;
let agent: HugeAgent;
let provider: Server;
const providerAnswers: HugeAnswer[] = [];

beforeAll(async () => {
  upstream = await startHugeMcpUpstream(HUGE);
  agent = await startHugeAgent(HUGE);
  // An OpenAI-compatible provider whose chat answer is a 400 MB JSON body.
  provider = createServer((req, res) => {
    req.resume();
    if (req.url?.startsWith("/cards/")) return serveCard(req.url, res);
    const answer = writeHugeAnswer(res, {
      contentType: "application/json",
      head: '{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"',
      tail: '"}}]}',
      fillBytes: HUGE,
    });
    providerAnswers.push(answer.record);
  });
  await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
  gateway = await startTestGateway({
    GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES: String(8 * MB),
    AGENT_CARD_FETCH_TIMEOUT_MS: "1000",
  });
  ({ server } = await seedMcpServer(gateway, {
    url: upstream.url,
    workspaceId: gateway.gateway.bootstrap.defaultWorkspaceId,
  }));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await agent?.close();
  provider?.closeAllConnections();
  await new Promise((resolve) => provider?.close(resolve));
});

/**
 * Runs `work` while /health is asked every 50 ms and RSS sampled: the slowest /health answer and the RSS
 * growth over the run.
 */
async function watched<T>(
  label: string,
  work: () => Promise<T>,
): Promise<{ result: T; slowestHealthMs: number; rssGrowth: number }> {
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  let slowest = 0;
  let running = true;
  const probe = (async () => {
    while (running) {
      const started = performance.now();
      const health = await fetch(`${gateway.url}/health`);
      await health.arrayBuffer();
      slowest = Math.max(slowest, performance.now() - started);
      peak = Math.max(peak, process.memoryUsage().rss);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const result = await work();
    console.log(
      `${label}: slowest /health ${slowest.toFixed(0)} ms, RSS growth ${((peak - baseline) / MB).toFixed(0)} MB`,
    );
    return { result, slowestHealthMs: slowest, rssGrowth: peak - baseline };
  } finally {
    running = false;
    await probe;
  }
}

const callDump = (format: "json" | "sse") =>
  fetch(`${gateway.url}/mcp/${server.slug}`, {
    method: "POST",
    headers: {
      "x-gateway-api-key": gateway.adminKey,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 7,
      method: "tools/call",
      params: { name: "dump", arguments: { format } },
    }),
  });

describe("MCP upstream answers", () => {
  for (const format of ["json", "sse"] as const) {
    it(`cuts a 400 MB tool result (${format}) at the limit with 502, /health responsive and memory bounded`, async () => {
      const before = upstream.answers.length;
      const { result, slowestHealthMs, rssGrowth } = await watched(`MCP ${format}`, async () => {
        const response = await callDump(format);
        return { status: response.status, body: await response.json() };
      });
      expect(result.status).toBe(502);
      expect(result.body).toMatchObject({
        jsonrpc: "2.0",
        id: 7,
        error: { code: -32603, data: { code: "upstream_response_too_large" } },
      });
      expect(result.body.error.message).toContain("MCP_MAX_RESPONSE_BYTES");
      // The upstream was cut off: it wrote the limit and what the sockets held, not the 400 MB.
      await expect.poll(() => upstream.answers.length).toBe(before + 1);
      await expect.poll(() => upstream.answers[before]!.cut).toBe(true);
      expect(upstream.answers[before]!.written).toBeLessThan(80 * MB);
      expect(slowestHealthMs).toBeLessThan(1000);
      expect(rssGrowth).toBeLessThan(300 * MB);
    });
  }

  it("fails the MCP SDK client's call promptly with the size error, not a hang", async () => {
    const client = new Client({ name: "e2e", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${server.slug}`), {
        requestInit: { headers: { "x-gateway-api-key": gateway.adminKey } },
      }),
    );
    try {
      const started = performance.now();
      await expect(client.callTool({ name: "dump", arguments: { format: "sse" } })).rejects.toThrow(
        /larger than the limit/,
      );
      expect(performance.now() - started).toBeLessThan(30_000);
    } finally {
      await client.close();
    }
  });
});

/** Agent cards that used to answer 500: one nested 10,000 levels deep, one whose body trickles for ever. */
function serveCard(url: string, res: import("node:http").ServerResponse): void {
  res.writeHead(200, { "content-type": "application/json" });
  if (url === "/cards/deep.json") {
    const depth = 10_000;
    res.end(`{"name":"Deep","url":"https://deep.example","extra":${"[".repeat(depth)}${"]".repeat(depth)}}`);
    return;
  }
  // Headers at once, then a byte a second: the body never ends within the fetch's timeout.
  res.write('{"name":"Slow",');
  const timer = setInterval(() => res.write(" "), 1000);
  res.on("close", () => clearInterval(timer));
}

describe("agent cards", () => {
  const fetchCard = (path: string) =>
    call(gateway, gateway.adminKey, "POST", "/v2/agent-integrations/fetch-agent-card", {
      url: `http://127.0.0.1:${(provider.address() as AddressInfo).port}${path}`,
    });

  it("refuses a deeply nested card with 422, not 500", async () => {
    const deep = await fetchCard("/cards/deep.json");
    expect(deep.status, deep.text).toBe(422);
    expect(deep.body.error).toMatchObject({ code: "agent_card_too_deep", param: "url" });
  });

  it("refuses a card whose body trickles past the timeout with 422, not 500", async () => {
    const started = performance.now();
    const slow = await fetchCard("/cards/slow.json");
    expect(slow.status, slow.text).toBe(422);
    expect(slow.body.error).toMatchObject({ code: "agent_card_unavailable" });
    expect(slow.body.error.message).toContain("timed out");
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

describe("A2A agent answers", () => {
  it("cuts a 400 MB message at AGENT_MAX_RESPONSE_BYTES with 502 in JSON-RPC's shape", async () => {
    const created = await call(gateway, gateway.adminKey, "POST", "/v2/agent-integrations", {
      name: "Huge",
      slug: "huge",
      url: agent.url,
      workspace_id: gateway.gateway.bootstrap.defaultWorkspaceId,
    });
    expect(created.status, created.text).toBe(201);
    const { result, slowestHealthMs, rssGrowth } = await watched("A2A", async () => {
      const response = await fetch(`${gateway.url}/v1/agents/huge`, {
        method: "POST",
        headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: "a-1",
          method: "message/send",
          params: {
            message: { kind: "message", messageId: "u-1", role: "user", parts: [{ kind: "text", text: "Hi" }] },
          },
        }),
      });
      return { status: response.status, body: await response.json() };
    });
    expect(result.status).toBe(502);
    expect(result.body).toMatchObject({
      jsonrpc: "2.0",
      id: "a-1",
      error: { code: -32603, data: [{ metadata: { code: "upstream_response_too_large" } }] },
    });
    expect(result.body.error.message).toContain("AGENT_MAX_RESPONSE_BYTES");
    await expect.poll(() => agent.answers.at(-1)?.cut).toBe(true);
    expect(agent.answers.at(-1)!.written).toBeLessThan(80 * MB);
    expect(slowestHealthMs).toBeLessThan(1000);
    expect(rssGrowth).toBeLessThan(300 * MB);
  });
});

describe("provider answers", () => {
  it("cuts a 400 MB chat answer at GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES with 502 in OpenAI's shape", async () => {
    const openai = new OpenAI({
      apiKey: "sk-test",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`,
      },
    });
    const { result, slowestHealthMs, rssGrowth } = await watched("provider", () =>
      openai.chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] }).then(
        () => undefined,
        (error: unknown) => error,
      ),
    );
    expect(result).toBeInstanceOf(OpenAI.APIError);
    const error = result as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(502);
    expect(error.error).toMatchObject({ code: "upstream_response_too_large", type: "server_error" });
    expect(error.message).toContain("GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES");
    await expect.poll(() => providerAnswers.at(-1)?.cut).toBe(true);
    expect(providerAnswers.at(-1)!.written).toBeLessThan(80 * MB);
    expect(slowestHealthMs).toBeLessThan(1000);
    expect(rssGrowth).toBeLessThan(300 * MB);
  });
});
