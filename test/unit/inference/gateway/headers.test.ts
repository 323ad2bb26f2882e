import { describe, expect, it } from "vitest";
import { HttpError } from "../../../../core/http/errors.ts";
import {
  MASKED,
  headersForLog,
  inlineConfigJson,
  parseGatewayHeaders,
  parseMetadata,
} from "../../../../core/http/gateway-headers.ts";

const parse = (headers: Record<string, string>) => parseGatewayHeaders(new Headers(headers), "trace-1");

const rejects = (headers: Record<string, string>, param: string) => {
  try {
    parse(headers);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    expect((error as HttpError).param).toBe(param);
    return;
  }
  throw new Error("accepted");
};

describe("gateway request headers", () => {
  it("parses every header of spec 5.3 once, x-gateway- winning over x-portkey-", () => {
    const parsed = parse({
      "x-gateway-metadata": JSON.stringify({ _user: "alice", _environment: "prod" }),
      "x-gateway-config": '{"provider":"openai"}',
      "x-portkey-provider": "anthropic",
      "x-gateway-provider": "openai",
      "x-portkey-virtual-key": "vk-1",
      "x-gateway-custom-host": "https://llm.example.com/v1",
      "x-gateway-request-timeout": "1500",
      "x-gateway-forward-headers": '["X-Team", "x-secret"]',
      "x-gateway-sensitive-headers": "X-Secret, x-other",
      "x-gateway-beta": "use-responses-api-2026-07-30, server-side-mcp-2026-06-01",
      "x-gateway-span-id": "span-1",
      "x-portkey-parent-span-id": "span-0",
      "x-gateway-span-name": "retrieval step",
      "x-gateway-cache-force-refresh": "true",
      "x-gateway-cache-namespace": "ns",
      "x-gateway-fetch-integrated-models": "TRUE",
    });
    const { values, ...fields } = parsed;
    // Every raw value by name, for later readers (the cloud credential headers): x-gateway- wins, aliases fill in.
    expect(values.get("provider")).toBe("openai");
    expect(values.get("virtual-key")).toBe("vk-1");
    expect(values.size).toBe(15); // 16 headers, provider twice
    expect(fields).toEqual({
      traceId: "trace-1",
      metadata: { _user: "alice", _environment: "prod" },
      config: '{"provider":"openai"}',
      provider: "openai",
      virtualKey: "vk-1",
      customHost: "https://llm.example.com/v1",
      requestTimeoutMs: 1500,
      forwardHeaders: ["X-Team"],
      sensitiveHeaders: ["x-secret", "x-other"],
      beta: ["use-responses-api-2026-07-30", "server-side-mcp-2026-06-01"],
      spanId: "span-1",
      parentSpanId: "span-0",
      spanName: "retrieval step",
      cacheForceRefresh: true,
      cacheNamespace: "ns",
      fetchIntegratedModels: true,
    });
  });

  it("costs nothing without gateway headers", () => {
    const { values, ...fields } = parse({ authorization: "Bearer x" });
    expect(values.size).toBe(0);
    expect(fields).toEqual({
      traceId: "trace-1",
      forwardHeaders: [],
      sensitiveHeaders: [],
      beta: [],
      cacheForceRefresh: false,
      fetchIntegratedModels: false,
    });
  });

  it("answers 400 for bad timeouts and span ids", () => {
    rejects({ "x-gateway-request-timeout": "soon" }, "x-gateway-request-timeout");
    rejects({ "x-gateway-request-timeout": "-5" }, "x-gateway-request-timeout");
    rejects({ "x-gateway-span-id": "has spaces" }, "x-gateway-span-id");
    rejects({ "x-gateway-parent-span-id": "x".repeat(129) }, "x-gateway-parent-span-id");
    rejects({ "x-gateway-span-name": "x".repeat(257) }, "x-gateway-span-name");
  });
});

describe("metadata limits (spec 2.8)", () => {
  const pairs = (count: number) =>
    JSON.stringify(Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, "v"])));

  it("accepts 16 string pairs with 64-character keys and 512-character values, and null", () => {
    expect(Object.keys(parseMetadata(pairs(16))!)).toHaveLength(16);
    expect(parseMetadata(JSON.stringify({ ["k".repeat(64)]: "v".repeat(512) }))).toBeDefined();
    expect(parseMetadata("null")).toBeUndefined();
  });

  it.each([
    [pairs(17), "x-gateway-metadata"],
    [JSON.stringify({ ["k".repeat(65)]: "v" }), `x-gateway-metadata.${"k".repeat(65)}`],
    [JSON.stringify({ k: "v".repeat(513) }), "x-gateway-metadata.k"],
    [JSON.stringify({ k: 1 }), "x-gateway-metadata.k"],
    [JSON.stringify({ k: { nested: "x" } }), "x-gateway-metadata.k"],
    [JSON.stringify(["a"]), "x-gateway-metadata"],
    ["{broken", "x-gateway-metadata"],
  ])("rejects %s", (value, param) => {
    rejects({ "x-gateway-metadata": value }, param);
  });
});

describe("headers for logs", () => {
  it("masks credentials and ORGANISATION_HEADERS_TO_MASK, hashes sensitive headers, masks keys in inline configs", () => {
    const headers = new Headers({
      authorization: "Bearer sk-secret",
      "x-api-key": "sk-ant",
      "x-gateway-api-key": "gk-1",
      "x-gateway-aws-secret-access-key": "aws-secret",
      "x-gateway-aws-session-token": "session",
      "x-gateway-vertex-service-account-json": "{}",
      "x-customer-id": "customer-42",
      "x-internal-route": "blue",
      "x-gateway-config": JSON.stringify({
        strategy: { mode: "fallback" },
        targets: [{ provider: "openai", api_key: "sk-in-config" }],
      }),
      "content-type": "application/json",
    });
    const logged = headersForLog(headers, {
      sensitiveHeaders: ["X-Customer-Id"],
      organisationHeadersToMask: ["x-internal-route"],
    });
    for (const name of [
      "authorization",
      "x-api-key",
      "x-gateway-api-key",
      "x-gateway-aws-secret-access-key",
      "x-gateway-aws-session-token",
      "x-gateway-vertex-service-account-json",
      "x-internal-route",
    ]) {
      expect(logged[name], name).toBe(MASKED);
    }
    expect(logged["x-customer-id"]).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(logged["x-gateway-config"]).not.toContain("sk-in-config");
    expect(JSON.parse(logged["x-gateway-config"]!).targets[0]).toEqual({ provider: "openai", api_key: MASKED });
    expect(logged["content-type"]).toBe("application/json");
    const base64 = Buffer.from(JSON.stringify({ provider: "openai", apiKey: "sk-b64" })).toString("base64");
    expect(headersForLog(new Headers({ "x-gateway-config": base64 }))["x-gateway-config"]).not.toContain("sk-b64");
    expect(headersForLog(new Headers({ "x-gateway-config": "pc-saved" }))["x-gateway-config"]).toBe("pc-saved");
    // An inline guardrail's webhook headers are its credentials, whatever their names.
    const guarded = JSON.stringify({
      input_guardrails: [
        { "default.webhook": { webhookURL: "https://hooks.example", headers: { "X-Signature": "sig-1" } } },
      ],
    });
    const loggedGuarded = headersForLog(new Headers({ "x-gateway-config": guarded }))["x-gateway-config"]!;
    expect(loggedGuarded).not.toContain("sig-1");
    expect(JSON.parse(loggedGuarded).input_guardrails[0]["default.webhook"]).toEqual({
      webhookURL: "https://hooks.example",
      headers: { "X-Signature": MASKED },
    });
  });

  it("recognises inline configs as JSON or base64 JSON, and saved ids otherwise", () => {
    expect(inlineConfigJson(' {"a":1}')).toBe('{"a":1}');
    expect(inlineConfigJson(Buffer.from('{"a":1}').toString("base64"))).toBe('{"a":1}');
    expect(inlineConfigJson("pc-abc-123")).toBeUndefined();
    expect(inlineConfigJson("my-config")).toBeUndefined();
  });
});
