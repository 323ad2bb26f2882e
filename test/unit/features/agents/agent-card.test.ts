import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cardCandidates, fetchAgentCard } from "../../../../core/features/agents/card-fetch.ts";
import { AGENT_CARD_MAX_BYTES, checkAgentCard, parseAgentCard } from "../../../../core/features/agents/card-rules.ts";
import { gatewayAgentCard } from "../../../../core/features/agents/gateway-card.ts";
import { NO_TRUSTED_HOSTS, parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/** Agent card rules (spec 7, 8): shape, the 1 MB limit read no further than needed, and the SSRF rules. */

const failure = async (run: () => unknown) => {
  try {
    await run();
  } catch (error) {
    return error as { status: number; code: string; message: string };
  }
  throw new Error("expected a failure");
};

describe("agent card shape", () => {
  it("accepts a JSON object with string url and name", () => {
    expect(checkAgentCard({ name: "A", url: "https://a.example/a2a", extra: 1 }).name).toBe("A");
  });

  it.each([
    ["an array", [], "not a JSON object"],
    ["null", null, "not a JSON object"],
    ["a string", "card", "not a JSON object"],
    ["no name", { url: "https://a.example" }, "`name`"],
    ["no url", { name: "A" }, "`url`"],
    ["a numeric url", { name: "A", url: 5 }, "`url`"],
    ["an empty name", { name: "", url: "https://a.example" }, "`name`"],
  ])("refuses %s with a 422 naming what is wrong", async (_label, value, message) => {
    const error = await failure(() => checkAgentCard(value));
    expect(error.status).toBe(422);
    expect(error.code).toBe("invalid_agent_card");
    expect(error.message).toContain(message);
  });

  it("refuses text that is not JSON, and a card over 1 MB", async () => {
    expect((await failure(() => parseAgentCard("{nope"))).message).toContain("not valid JSON");
    const big = JSON.stringify({ name: "A", url: "u", pad: "x".repeat(AGENT_CARD_MAX_BYTES) });
    expect((await failure(() => parseAgentCard(big))).code).toBe("agent_card_too_large");
  });
});

describe("where the card is looked for", () => {
  it("reads a .json URL as the card, a base URL's well-known paths otherwise", () => {
    expect(cardCandidates(new URL("https://a.example/cards/agent.json"))).toEqual([
      "https://a.example/cards/agent.json",
    ]);
    expect(cardCandidates(new URL("https://a.example/agents/x/"))).toEqual([
      "https://a.example/agents/x/.well-known/agent-card.json",
      "https://a.example/agents/x/.well-known/agent.json",
    ]);
  });
});

describe("fetching a card", () => {
  let url: string;
  let bytesSent = 0;
  const server = createServer((request, response) => {
    if (request.url === "/endless/card.json") {
      // No content-length: the reader must stop on its own count.
      response.writeHead(200, { "content-type": "application/json" });
      const chunk = "x".repeat(64 * 1024);
      response.write('{"name":"A","url":"u","pad":"');
      const timer = setInterval(() => {
        if (bytesSent > 8 * AGENT_CARD_MAX_BYTES || response.destroyed) {
          clearInterval(timer);
          response.end('"}');
          return;
        }
        bytesSent += chunk.length;
        response.write(chunk);
      }, 1);
      return;
    }
    if (request.url === "/redirect/card.json") {
      response.writeHead(302, { location: "http://169.254.169.254/latest/meta-data" }).end();
      return;
    }
    response.writeHead(404).end();
  });
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    server.close();
  });
  const trusted = () => parseTrustedHosts(["127.0.0.1"]);

  it.each([
    "http://127.0.0.1:1/card.json",
    "http://10.0.0.8/",
    "http://169.254.169.254/latest",
    "http://metadata.google.internal/",
    "http://[::1]/",
    "file:///etc/passwd",
    "gopher://a.example/",
  ])("refuses %s without TRUSTED_CUSTOM_HOSTS (400)", async (target) => {
    const error = await failure(() => fetchAgentCard(target, { trustedHosts: NO_TRUSTED_HOSTS, timeoutMs: 2000 }));
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_custom_host");
  });

  it("stops reading a card past 1 MB", async () => {
    const error = await failure(() =>
      fetchAgentCard(`${url}/endless/card.json`, { trustedHosts: trusted(), timeoutMs: 10_000 }),
    );
    expect(error.code).toBe("agent_card_too_large");
    expect(bytesSent).toBeLessThan(4 * AGENT_CARD_MAX_BYTES);
  });

  it("follows no redirect to a private address", async () => {
    const error = await failure(() =>
      fetchAgentCard(`${url}/redirect/card.json`, { trustedHosts: trusted(), timeoutMs: 2000 }),
    );
    expect(error.status).toBe(400);
    expect(error.code).toBe("invalid_custom_host");
  });

  it("answers 422 when neither well-known path has a card", async () => {
    const error = await failure(() => fetchAgentCard(`${url}/nothing`, { trustedHosts: trusted(), timeoutMs: 2000 }));
    expect(error.status).toBe(422);
    expect(error.code).toBe("agent_card_unavailable");
  });
});

describe("the card the gateway serves", () => {
  it("points every interface at the gateway and describes the gateway's auth, not the upstream's", () => {
    const card = gatewayAgentCard(
      {
        name: "A",
        url: "http://upstream.example/a2a",
        additionalInterfaces: [{ url: "http://upstream.example/rest", transport: "HTTP+JSON" }],
        supportedInterfaces: [{ url: "http://upstream.example/a2a", protocolBinding: "JSONRPC" }],
        securitySchemes: { upstream: { type: "apiKey", in: "header", name: "x-upstream" } },
        signatures: [{ protected: "x", signature: "y" }],
        capabilities: { streaming: true, pushNotifications: true },
      },
      "https://gw.example/v1/agents/a",
    );
    expect(JSON.stringify(card)).not.toContain("upstream.example");
    expect(card).toMatchObject({
      name: "A",
      url: "https://gw.example/v1/agents/a",
      capabilities: { streaming: true, pushNotifications: false },
    });
    expect(Object.keys(card.securitySchemes as object)).toEqual(["gatewayApiKey", "gatewayJwt"]);
    expect(card.signatures).toBeUndefined();
  });
});
