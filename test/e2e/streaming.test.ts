import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";

/** Streaming guarantees: no buffering, client disconnect cancels the upstream, stalls end with an error event. */

let gateway: TestGateway;
let upstream: MockServer;
let release: () => void = () => {};
let upstreamClosed: Promise<void> = Promise.resolve();

const chunk = (content: string) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

beforeAll(async () => {
  upstream = await startMockServer(async (req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.write(chunk("first"));
    if (req.path.includes("stall")) return; // never finishes
    let closedResolve!: () => void;
    upstreamClosed = new Promise((resolve) => {
      closedResolve = resolve;
    });
    res.on("close", closedResolve);
    await new Promise<void>((resolve) => {
      release = resolve;
    });
    if (res.writableEnded || res.destroyed) return;
    res.write(chunk("second"));
    res.end("data: [DONE]\n\n");
  });
  gateway = await startTestGateway();
});

afterAll(async () => {
  release();
  await gateway?.close();
  await upstream?.close();
});

function streamRequest(path: string, extra: Record<string, string> = {}, signal?: AbortSignal) {
  return fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    signal,
    headers: {
      "content-type": "application/json",
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/${path}`,
      ...extra,
    },
    body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true }),
  });
}

describe("streaming", () => {
  it("delivers the first chunk before the upstream has finished", async () => {
    const response = await streamRequest("v1");
    const reader = response.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('"first"');
    // Only now may the upstream continue: had the gateway buffered, we would never have seen "first".
    release();
    let rest = "";
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    expect(rest).toContain('"second"');
    expect(rest.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("cancels the upstream request when the client disconnects", async () => {
    const controller = new AbortController();
    const response = await streamRequest("v1", {}, controller.signal);
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await expect(
      Promise.race([
        upstreamClosed.then(() => "closed"),
        new Promise((resolve) => setTimeout(() => resolve("still open"), 3000)),
      ]),
    ).resolves.toBe("closed");
    release();
  });

  it("ends a stalled stream with an error event after the request timeout", async () => {
    const started = Date.now();
    const response = await streamRequest("stall", { "x-gateway-request-timeout": "400" });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"first"');
    const last = text.trim().split("\n\n").at(-1)!;
    expect(JSON.parse(last.replace(/^data: /, "")).error).toMatchObject({ code: "request_timeout" });
    expect(Date.now() - started).toBeLessThan(3000);
  });
});
