import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/** `x-gateway-forward-headers` and a config's `forward_headers` never pass credentials or gateway headers on. */

let gateway: TestGateway;
let upstream: OpenAIMock;

beforeAll(async () => {
  upstream = await startOpenAIMock();
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const CREDENTIAL_HEADERS = ["x-gateway-api-key", "cookie", "x-api-key", "authorization", "x-portkey-config"];

describe("forwarded headers", () => {
  it("forwards custom headers but never credential or gateway headers, from the header or a config", async () => {
    for (const via of ["header", "config"] as const) {
      upstream.reset();
      const names = ["x-team", ...CREDENTIAL_HEADERS];
      const config = {
        provider: "openai",
        api_key: "sk-config-key",
        custom_host: `${upstream.url}/v1`,
        ...(via === "config" ? { forward_headers: names } : {}),
      };
      const response = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gateway-api-key": gateway.adminKey,
          "x-gateway-config": JSON.stringify(config),
          ...(via === "header" ? { "x-gateway-forward-headers": names.join(",") } : {}),
          "x-team": "search",
          cookie: "session=client-cookie",
          "x-api-key": "client-x-api-key",
          authorization: "Bearer client-token",
          "x-portkey-config": "pc-something",
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
      });
      expect(response.status, via).toBe(200);
      const sent = upstream.lastRequest()!.headers;
      expect(sent["x-team"], via).toBe("search");
      expect(sent.authorization, via).toBe("Bearer sk-config-key");
      for (const name of ["x-gateway-api-key", "cookie", "x-api-key", "x-portkey-config"]) {
        expect(sent[name], `${via}: ${name}`).toBeUndefined();
      }
      expect(JSON.stringify(sent), via).not.toContain(gateway.adminKey);
    }
  });
});
