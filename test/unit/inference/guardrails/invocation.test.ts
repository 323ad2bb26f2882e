import { describe, expect, it, vi } from "vitest";
import * as z from "zod";
import type { CheckDefinition, GuardrailDefinition } from "../../../../core/inference/guardrails/types.ts";
import type { RequestContext, Services } from "../../../../core/services.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/**
 * The invoke endpoint's shaping of a guardrail run: what the checks see of a text or of chat messages, per
 * phase, and a redacting check's rewrite given back in the shape the input came in.
 */

const seen: Array<{ text: string; parts: string[]; request: unknown; response: unknown; model: string }> = [];
const redactor: CheckDefinition<{ word: string }> = {
  id: "test.redact",
  description: "replaces a word, and records what it saw",
  parameters: z.object({ word: z.string() }),
  rewrites: () => true,
  run: (input, { word }) => {
    seen.push({
      text: input.text,
      parts: input.parts,
      request: input.request,
      response: input.response,
      model: input.model,
    });
    return {
      verdict: true,
      explanation: "redacted",
      transformedParts: input.parts.map((part) => part.replaceAll(word, "[X]")),
    };
  },
};

vi.mock("../../../../core/inference/guardrails/checks/registry.ts", async (original) => {
  const real = await original<typeof import("../../../../core/inference/guardrails/checks/registry.ts")>();
  return { ...real, findCheck: (id: string) => (id === redactor.id ? redactor : real.findCheck(id)) };
});

const { invokeGuardrail } = await import("../../../../core/inference/guardrails/invocation.ts");

const guardrail: GuardrailDefinition = {
  id: "gr_test",
  checks: [
    { id: "test.redact", parameters: { word: "Alice" } },
    { id: "default.regexMatch", parameters: { rule: "\\[X\\]" } },
  ],
  actions: { deny: true, async: false, soft_deny_200: false, on_error: "open", timeout_ms: 1_000 },
};

const ctx = {
  traceId: "t",
  params: {},
  services: {
    settings: { EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED: false },
    trustedHosts: parseTrustedHosts([]),
  } as unknown as Services,
  signal: new AbortController().signal,
  waitUntil: () => {},
  startedAt: 0,
} as RequestContext;
const request = new Request("http://gateway/v1/guardrails/gr_test/invoke", { method: "POST" });

describe("invokeGuardrail", () => {
  it("gives a text's rewrite back as text; later checks judge the rewrite", async () => {
    seen.length = 0;
    const answer = await invokeGuardrail(request, ctx, guardrail, { input: "Alice called", model: "m" });
    expect(seen[0]).toEqual({
      text: "Alice called",
      parts: ["Alice called"],
      request: { model: "m", messages: [{ role: "user", content: "Alice called" }] },
      response: undefined,
      model: "m",
    });
    expect(answer).toMatchObject({
      verdict: true,
      denied: false,
      transformed: { text: "[X] called" },
      checks: [
        { id: "test.redact", transformed: true },
        { id: "default.regexMatch", verdict: true },
      ],
    });
  });

  it("writes a rewrite of messages back into their strings and text parts, leaving the input untouched", async () => {
    const messages = [
      { role: "system", content: "Be kind to Alice." },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://x/y.png" } },
          { type: "text", text: "Who is Alice?" },
        ],
      },
    ];
    const copy = structuredClone(messages);
    const answer = await invokeGuardrail(request, ctx, guardrail, { input: messages as never });
    expect(answer.transformed).toEqual({
      messages: [
        { role: "system", content: "Be kind to [X]." },
        {
          role: "user",
          content: [
            { type: "image_url", image_url: { url: "https://x/y.png" } },
            { type: "text", text: "Who is [X]?" },
          ],
        },
      ],
    });
    expect(messages).toEqual(copy);
  });

  it("on output judges the answer (the last message) as a chat completion after the messages before it", async () => {
    seen.length = 0;
    const messages = [
      { role: "user", content: "Tell me about Alice" },
      { role: "assistant", content: "Alice is a cryptographer." },
    ];
    const answer = await invokeGuardrail(request, ctx, guardrail, { input: messages as never, phase: "output" });
    expect(seen[0]).toMatchObject({
      text: "Alice is a cryptographer.",
      parts: ["Alice is a cryptographer."],
      request: { messages: [messages[0]] },
      response: { choices: [{ index: 0, message: messages[1] }] },
    });
    expect(answer).toMatchObject({
      phase: "output",
      transformed: { messages: [messages[0], { role: "assistant", content: "[X] is a cryptographer." }] },
    });
  });

  it("reports no rewrite when nothing changed", async () => {
    const answer = await invokeGuardrail(request, ctx, guardrail, { input: "Bob called" });
    expect(answer).toMatchObject({ verdict: false, denied: true });
    expect(answer.transformed).toBeUndefined();
  });
});
