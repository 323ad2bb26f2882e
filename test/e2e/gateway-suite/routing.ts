import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { SuiteContext } from "./context.ts";

/** The end-to-end suite (index.ts): routing, guardrails, saved integrations. */
export function describeRouting(suite: SuiteContext): void {
  const { clientFor, api, messages } = suite;
  describe("routing", () => {
    it("a fallback whose first target fails answers from the second", async () => {
      const config = {
        strategy: { mode: "fallback" },
        targets: [
          { provider: "openai", api_key: "k", custom_host: suite.faults.host("503") },
          { provider: "openai", api_key: "k", custom_host: suite.faults.host("ok-second") },
        ],
      };
      const client = clientFor({ "x-gateway-config": JSON.stringify(config) });
      const { data, response } = await client.chat.completions.create({ model: "m", messages }).withResponse();
      expect(data.choices[0]!.message.content).toBe("second");
      expect(response.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
      let streamed = "";
      for await (const chunk of await client.chat.completions.create({ model: "m", messages, stream: true }))
        streamed += chunk.choices[0]?.delta?.content ?? "";
      expect(streamed).toBe("second");
    });

    it("guardrails (loaded on first use): an input denial answers 446, an output check passes a stream", async () => {
      const config = {
        provider: "openai",
        custom_host: `${suite.openai.url}/v1`,
        input_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
        output_guardrails: [{ "default.regexMatch": { rule: "(?i)password", not: true }, deny: true }],
      };
      const client = clientFor({ "x-gateway-config": JSON.stringify(config) });
      const denied = await client.chat.completions
        .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "the password" }] })
        .catch((error: unknown) => error);
      expect(denied).toBeInstanceOf(OpenAI.APIError);
      expect((denied as InstanceType<typeof OpenAI.APIError>).status).toBe(446);
      expect((denied as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ type: "hooks_failed" });
      let streamed = "";
      for await (const chunk of await client.chat.completions.create({ model: "gpt-4o-mini", messages, stream: true }))
        streamed += chunk.choices[0]?.delta?.content ?? "";
      expect(streamed).toBeTruthy();

      // A long text is judged on a guardrail thread, whose entry the build emits beside the bundle
      // (check-worker.mjs): a thread that could not start would leave the check errored and passed (on_error: open).
      const long = "the password is long ".repeat(10_000);
      const judged = await fetch(`${suite.gateway.url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          authorization: "Bearer provider-key",
          "x-gateway-api-key": suite.gateway.adminKey,
          "x-gateway-config": JSON.stringify(config),
        },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: long }] }),
      });
      expect(judged.status).toBe(446);
      const [check] = (await judged.json()).hook_results.before_request_hooks[0].checks;
      expect(check).toMatchObject({ id: "default.regexMatch", verdict: false, error: null });
    });

    it("a saved integration, also inside a saved config", async () => {
      const created = await api("POST", "/v1/integrations", {
        name: "Bundle OpenAI",
        slug: "bundle-openai",
        ai_provider_id: "openai",
        key: "sk-integration-bundle",
        configurations: { custom_host: `${suite.openai.url}/v1` },
      });
      expect(created.status).toBe(201);
      const direct = await clientFor({ "x-gateway-provider": "@bundle-openai" }).chat.completions.create({
        model: "gpt-4o-mini",
        messages,
      });
      expect(direct.choices[0]!.message.content).toBeTruthy();
      expect(suite.openai.requests.at(-1)!.headers.authorization).toBe("Bearer sk-integration-bundle");

      const config = await api("POST", "/v1/configs", {
        name: "bundle fallback",
        config: { strategy: { mode: "fallback" }, targets: [{ provider: "@bundle-openai" }] },
      });
      expect(config.status, JSON.stringify(config.body)).toBeLessThan(300);
      const viaConfig = await clientFor({
        "x-gateway-config": config.body.slug ?? config.body.id,
      }).chat.completions.create({
        model: "gpt-4o-mini",
        messages,
      });
      expect(viaConfig.choices[0]!.message.content).toBeTruthy();
    });

    it("the simple cache answers a repeated request from the store, without calling the provider again", async () => {
      const question = `cache ${randomUUID()}`;
      const client = clientFor({
        "x-gateway-config": JSON.stringify({
          provider: "openai",
          api_key: "provider-key",
          custom_host: `${suite.openai.url}/v1`,
          cache: { mode: "simple" },
        }),
      });
      const ask = () =>
        client.chat.completions
          .create({ model: "gpt-4o-mini", messages: [{ role: "user", content: question }] })
          .withResponse();
      const first = await ask();
      const second = await ask();
      expect(first.response.headers.get("x-gateway-cache-status")).toBe("MISS");
      expect(second.response.headers.get("x-gateway-cache-status")).toBe("HIT");
      expect(second.data.choices[0]!.message.content).toBe(first.data.choices[0]!.message.content);
      const calls = suite.openai.requests.filter((request) => request.json().messages?.[0]?.content === question);
      expect(calls).toHaveLength(1);
    });

    it("a requests rate limit admits exactly its value of concurrent requests, and others get 429", async () => {
      const model = `limited-${randomUUID()}`;
      const policy = await api("POST", "/v2/policies/rate-limits", {
        type: "requests",
        unit: "rpm",
        value: 5,
        conditions: [{ key: "model", value: model }],
      });
      expect(policy.status, JSON.stringify(policy.body)).toBe(201);
      // Policies reach every process within 3 s (docs/limits.md): on AWS each Lambda instance is one.
      await new Promise((resolve) => setTimeout(resolve, 3100));
      const statuses = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const response = await fetch(`${suite.gateway.url}/v1/chat/completions`, {
            method: "POST",
            headers: {
              "content-type": "application/json",
              "x-gateway-api-key": suite.gateway.adminKey,
              "x-gateway-provider": "openai",
              "x-gateway-custom-host": `${suite.openai.url}/v1`,
              authorization: "Bearer provider-key",
            },
            body: JSON.stringify({ model, messages }),
          });
          await response.arrayBuffer();
          return response.status;
        }),
      );
      expect(statuses.filter((status) => status === 200)).toHaveLength(5);
      expect(statuses.filter((status) => status === 429)).toHaveLength(7);
      await api("DELETE", `/v2/policies/rate-limits/${policy.body.id}`);
    });
  });
}
