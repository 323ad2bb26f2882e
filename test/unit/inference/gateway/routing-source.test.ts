import { describe, expect, it } from "vitest";
import { loadSettings } from "../../../../core/config/settings.ts";
import { handleInference } from "../../../../core/inference/gateway/inference.ts";
import type { RequestContext, Services } from "../../../../core/services.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { parseGatewayHeaders } from "../../../../core/http/gateway-headers.ts";
import { resolveRouting } from "../../../../core/inference/routing/source.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import { chatCompletionRequest } from "../../../../core/inference/gateway/schemas/chat.ts";

function context(env: Record<string, string> = {}, overrides: Partial<Services> = {}): RequestContext {
  const services = {
    settings: loadSettings(env),
    trustedHosts: parseTrustedHosts([]),
    resolveSavedConfig: async (id: string) => {
      throw new HttpError(404, `Unknown config '${id}'.`, { code: "config_not_found" });
    },
    resolveDefaultConfig: async () => undefined,
    resolveSavedProvider: async (slug: string) => {
      throw new HttpError(404, `Unknown saved provider '@${slug}'.`, { code: "provider_not_found" });
    },
    ...overrides,
  } as unknown as Services;
  return {
    traceId: "t",
    params: {},
    services,
    signal: new AbortController().signal,
    waitUntil: () => {},
    startedAt: 0,
  };
}

const resolve = (headers: Record<string, string>, ctx = context()) =>
  resolveRouting(parseGatewayHeaders(new Headers(headers), "t"), ctx);

describe("where routing comes from", () => {
  it("compiles an inline config once and serves it from the cache afterwards", async () => {
    const ctx = context();
    const config = JSON.stringify({
      strategy: { mode: "fallback" },
      targets: [{ provider: "openai" }, { provider: "groq" }],
    });
    const first = await resolve({ "x-gateway-config": config }, ctx);
    expect(await resolve({ "x-gateway-config": config }, ctx)).toBe(first);
    expect(first).toMatchObject({ kind: "strategy", mode: "fallback" });
  });

  it("builds the single header target without any config work", async () => {
    const target = await resolve({ "x-gateway-provider": "openai" });
    expect(target).toMatchObject({ kind: "leaf", path: "config", fromHeaders: true });
    expect(await resolve({ "x-gateway-provider": "anthropic" })).toBe(target);
  });

  it("asks the control-plane seams for saved configs and the workspace default", async () => {
    await expect(resolve({ "x-gateway-config": "pc-123" })).rejects.toMatchObject({
      status: 404,
      code: "config_not_found",
    });
    const saved = { provider: "openai", api_key: "sk" };
    const ctx = context(
      {},
      { resolveSavedConfig: async () => saved, resolveDefaultConfig: async () => ({ provider: "groq" }) },
    );
    const first = await resolve({ "x-gateway-config": "pc-123" }, ctx);
    expect(first).toMatchObject({ kind: "leaf", provider: "openai", apiKey: "sk" });
    expect(await resolve({ "x-gateway-config": "pc-123" }, ctx)).toBe(first);
    expect(await resolve({}, ctx)).toMatchObject({ kind: "leaf", provider: "groq" });
    expect(await resolve({})).toBeUndefined();
    await expect(resolve({ "x-gateway-config": "not a slug!" })).rejects.toMatchObject({
      status: 400,
      param: "x-gateway-config",
    });
  });

  it("BLOCK_INLINE_CONFIG refuses inline configs, provider names and custom hosts, but not saved resources", async () => {
    const ctx = context({ BLOCK_INLINE_CONFIG: "true" });
    await expect(resolve({ "x-gateway-config": '{"provider":"openai"}' }, ctx)).rejects.toMatchObject({
      status: 403,
      code: "inline_config_blocked",
    });
    await expect(resolve({ "x-gateway-provider": "openai" }, ctx)).rejects.toMatchObject({
      status: 403,
      param: "x-gateway-provider",
    });
    await expect(
      resolve({ "x-gateway-provider": "@saved", "x-gateway-custom-host": "https://x.example.com" }, ctx),
    ).rejects.toMatchObject({ status: 403 });
    expect(await resolve({ "x-gateway-provider": "@saved" }, ctx)).toMatchObject({ fromHeaders: true });
    expect(await resolve({ "x-gateway-virtual-key": "vk" }, ctx)).toMatchObject({ fromHeaders: true });
  });

  it("answers 404 for unknown saved providers until integrations land", async () => {
    const request = new Request("http://gateway.test/v1/chat/completions", {
      method: "POST",
      headers: { "content-type": "application/json", "x-gateway-provider": "@nope" },
      body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "x" }] }),
    });
    await expect(handleInference("chat", request, context(), chatCompletionRequest)).rejects.toMatchObject({
      status: 404,
      code: "provider_not_found",
    });
  });
});
