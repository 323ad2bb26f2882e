import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { callTarget } from "../../../../../core/inference/gateway/call-target.ts";
import { newOutcome } from "../../../../../core/inference/gateway/outcome.ts";
import { takeSseSource } from "../../../../../core/inference/gateway/stream/sse-source.ts";
import { parseTrustedHosts } from "../../../../../core/security/custom-host.ts";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A Gemini stream that sends one chunk (with usage) and then stays silent. */
async function stalledGemini(): Promise<string> {
  const server = createServer((request, response) => {
    request.resume();
    response.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = {
      candidates: [{ index: 0, content: { role: "model", parts: [{ text: "Hello" }] } }],
      usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 1, totalTokenCount: 8 },
    };
    response.write(`data: ${JSON.stringify(chunk)}\n\n`);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("a streamed answer the client cancels", () => {
  it("is recorded as cut off: no end the provider never sent (finish reason, closing chunks)", async () => {
    const outcome = newOutcome("chat", "gemini-2.0-flash", true);
    const response = await callTarget({
      route: "chat",
      body: { model: "gemini-2.0-flash", stream: true, messages: [{ role: "user", content: "hi" }] },
      target: { provider: "google", apiKey: "test-key", customHost: await stalledGemini() },
      timeoutMs: 10_000,
      signal: new AbortController().signal,
      requestId: "req_cancel",
      outcome,
      startedAt: performance.now(),
      trustedHosts: parseTrustedHosts(["127.0.0.1"]),
    } as Parameters<typeof callTarget>[0]);
    const source = takeSseSource(response)!;
    expect(await source.next()).toContain("Hello");
    // The writer always has a read waiting: the client leaves while it waits.
    const waiting = source.next();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await source.cancel();
    expect(await waiting).toBeNull();
    await outcome.done;
    const body = outcome.responseBody as { choices: Array<{ finish_reason: string | null }> };
    expect(body.choices[0]!.finish_reason).toBeNull();
    expect(outcome.error?.status).toBe(499);
  });
});
