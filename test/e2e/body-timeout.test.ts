import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * A request body that trickles is cut (issue 38): past GATEWAY_BODY_TIMEOUT_MS from its headers the gateway
 * answers 408 `request_timeout` in OpenAI's error shape and closes the connection, instead of holding the
 * request for ever. A slow body that does arrive in time is served. Raw sockets, since no client library sends
 * a body a byte at a time.
 */

let gateway: TestGateway;
let upstream: OpenAIMock;

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway({ GATEWAY_BODY_TIMEOUT_MS: "1000" });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

interface RawAnswer {
  status: number;
  head: string;
  body: string;
  /** When the server closed the connection, in ms from the first byte sent. */
  closedAfterMs: number;
}

/**
 * Sends `head` then `body` in `pieces`, one every `everyMs`, and reads the answer until the server closes the
 * connection (or 10 s pass).
 */
function trickle(path: string, headers: Record<string, string>, body: string, pieces: number, everyMs: number) {
  const { port } = new URL(gateway.url);
  return new Promise<RawAnswer>((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    const started = performance.now();
    let received = "";
    const lines = Object.entries({ host: "127.0.0.1", ...headers }).map(([name, value]) => `${name}: ${value}`);
    socket.write(`POST ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`);
    const size = Math.ceil(body.length / pieces);
    let sent = 0;
    const timer = setInterval(() => {
      if (sent >= body.length || socket.destroyed) return clearInterval(timer);
      socket.write(body.slice(sent, sent + size));
      sent += size;
    }, everyMs);
    const giveUp = setTimeout(() => socket.destroy(new Error("no answer within 10 s")), 10_000);
    socket.on("data", (chunk) => {
      received += chunk.toString("utf8");
    });
    socket.on("error", reject);
    socket.on("close", () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      const [head = "", rest = ""] = received.split("\r\n\r\n");
      resolve({
        status: Number(head.split(" ")[1]),
        head,
        body: rest,
        closedAfterMs: performance.now() - started,
      });
    });
  });
}

const chatBody = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi there" }] });
const auth = () => ({
  "x-gateway-api-key": gateway.adminKey,
  "x-gateway-provider": "openai",
  "x-gateway-custom-host": `${upstream.url}/v1`,
  authorization: "Bearer sk-test",
  "content-type": "application/json",
  connection: "keep-alive",
});

describe("request body timeout", () => {
  it("cuts a chat body that trickles with 408 in OpenAI's shape and closes the connection", async () => {
    // 60 pieces, one every 200 ms: 12 s to send it all, against a 1 s limit.
    const answer = await trickle(
      "/v1/chat/completions",
      { ...auth(), "content-length": String(chatBody.length) },
      chatBody,
      60,
      200,
    );
    expect(answer.status).toBe(408);
    expect(answer.head.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: "request_timeout", type: "invalid_request_error" },
    });
    expect(JSON.parse(answer.body).error.message).toContain("GATEWAY_BODY_TIMEOUT_MS");
    expect(answer.closedAfterMs).toBeLessThan(4000);
  });

  it("cuts a chunked body the same way, and one on /v1/messages", async () => {
    const chunked = chatBody
      .match(/.{1,4}/g)!
      .map((piece) => `${piece.length.toString(16)}\r\n${piece}\r\n`)
      .join("");
    const answer = await trickle(
      "/v1/chat/completions",
      { ...auth(), "transfer-encoding": "chunked" },
      `${chunked}0\r\n\r\n`,
      60,
      200,
    );
    expect(answer.status).toBe(408);
    expect(answer.body).toContain("request_timeout");

    const messages = JSON.stringify({ model: "claude-x", max_tokens: 10, messages: [{ role: "user", content: "Hi" }] });
    const anthropic = await trickle(
      "/v1/messages",
      { ...auth(), "x-gateway-provider": "anthropic", "content-length": String(messages.length) },
      messages,
      60,
      200,
    );
    expect(anthropic.status).toBe(408);
    // On /v1/messages the gateway's own errors are in Anthropic's shape, as Anthropic's clients read them.
    expect(JSON.parse(anthropic.body)).toMatchObject({
      type: "error",
      error: { type: "timeout_error", message: expect.stringContaining("GATEWAY_BODY_TIMEOUT_MS") },
    });
  });

  it("serves a slow body that arrives within the limit", async () => {
    const answer = await trickle(
      "/v1/chat/completions",
      { ...auth(), "content-length": String(chatBody.length), connection: "close" },
      chatBody,
      4,
      100,
    );
    expect(answer.status).toBe(200);
    expect(upstream.requests.length).toBeGreaterThan(0);
  });

  it("keeps the gateway answering while bodies trickle", async () => {
    const started = performance.now();
    const health = await fetch(`${gateway.url}/health`);
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
