import { describe, expect, it } from "vitest";
import { invokeGuardrail } from "../../../../core/inference/guardrails/invocation.ts";
import { recordGuardrailSpans } from "../../../../core/inference/guardrails/spans.ts";
import type { GuardrailVerdict } from "../../../../core/inference/guardrails/types.ts";
import type { RequestContext, Services } from "../../../../core/services.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import { inMemorySpans } from "../../../helpers/in-memory-spans.ts";

/**
 * Guardrail spans with an in-memory OpenTelemetry SDK registered for this file: names, attributes and one
 * event per check when EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED is on; nothing when it is off.
 */

const exporter = inMemorySpans();

const on = { EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED: true };
const off = { EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED: false };
const context = { traceId: "trace-spans", organisationId: "org_1", workspaceId: "ws_1" };

const verdict = (overrides: Partial<GuardrailVerdict> = {}): GuardrailVerdict => ({
  id: "gr_cards",
  slug: "no-cards",
  name: "No card numbers",
  phase: "input",
  verdict: false,
  deny: true,
  async: false,
  soft_deny_200: false,
  transformed: false,
  checks: [
    {
      id: "default.regexMatch",
      verdict: false,
      explanation: "The text matches the pattern, which it must not.",
      data: { match: "4242 4242 4242 4242" },
      transformed: false,
      execution_time_ms: 2.5,
    },
    {
      id: "default.webhook",
      verdict: true,
      explanation: "The check could not run; passed (on_error: open).",
      error: "timed out after 800 ms",
      transformed: false,
      execution_time_ms: 800,
    },
  ],
  execution_time_ms: 801,
  created_at: "2026-11-24T12:00:01.000Z",
  ...overrides,
});

describe("recordGuardrailSpans", () => {
  it("records one span per guardrail run, timed like the run, with its attributes and one event per check", () => {
    recordGuardrailSpans(
      [
        verdict(),
        verdict({
          id: "inline:config.output_guardrails[0]",
          slug: undefined,
          name: undefined,
          phase: "output",
          verdict: true,
          deny: false,
          async: true,
          checks: [],
        }),
      ],
      { ...context, settings: on },
    );
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(["gateway.guardrail.input", "gateway.guardrail.output"]);
    const [input, output] = spans;
    expect(input!.attributes).toEqual({
      "gateway.guardrail.phase": "input",
      "gateway.guardrail.id": "gr_cards",
      "gateway.guardrail.slug": "no-cards",
      "gateway.guardrail.name": "No card numbers",
      "gateway.guardrail.verdict": false,
      "gateway.guardrail.action": "deny",
      "gateway.guardrail.deny": true,
      "gateway.guardrail.async": false,
      "gateway.guardrail.transformed": false,
      "gateway.guardrail.execution_time_ms": 801,
      "gateway.organisation_id": "org_1",
      "gateway.workspace_id": "ws_1",
      "gateway.trace_id": "trace-spans",
    });
    const millis = ([seconds, nanos]: [number, number]) => seconds * 1000 + nanos / 1e6;
    expect(millis(input!.endTime)).toBe(Date.parse("2026-11-24T12:00:01.000Z"));
    expect(millis(input!.endTime) - millis(input!.startTime)).toBeCloseTo(801, 3);
    expect(input!.events.map((event) => [event.name, event.attributes])).toEqual([
      [
        "gateway.guardrail.check",
        {
          "gateway.guardrail.check.id": "default.regexMatch",
          "gateway.guardrail.check.verdict": false,
          "gateway.guardrail.check.execution_time_ms": 2.5,
        },
      ],
      [
        "gateway.guardrail.check",
        {
          "gateway.guardrail.check.id": "default.webhook",
          "gateway.guardrail.check.verdict": true,
          "gateway.guardrail.check.execution_time_ms": 800,
          "gateway.guardrail.check.error": "timed out after 800 ms",
        },
      ],
    ]);
    // No text or check data reaches a span.
    expect(JSON.stringify([input!.attributes, input!.events])).not.toContain("4242");
    expect(output!.attributes).toMatchObject({
      "gateway.guardrail.id": "inline:config.output_guardrails[0]",
      "gateway.guardrail.action": "log",
      "gateway.guardrail.async": true,
      "gateway.guardrail.verdict": true,
    });
    expect(output!.attributes["gateway.guardrail.slug"]).toBeUndefined();
  });

  it("names soft denials", () => {
    recordGuardrailSpans([verdict({ soft_deny_200: true })], { ...context, settings: on });
    expect(exporter.getFinishedSpans()[0]!.attributes["gateway.guardrail.action"]).toBe("soft_deny");
  });

  it("records nothing with the flag off", () => {
    recordGuardrailSpans([verdict()], { ...context, settings: off });
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("the invoke endpoint records its run", async () => {
    const ctx = {
      traceId: "trace-invoke-span",
      params: {},
      principal: { kind: "api_key", organisationId: "org_2", scopes: ["*"] },
      services: { settings: on, trustedHosts: parseTrustedHosts([]) } as unknown as Services,
      signal: new AbortController().signal,
      waitUntil: () => {},
      startedAt: 0,
    } as RequestContext;
    await invokeGuardrail(
      new Request("http://gateway/v1/guardrails/gr_x/invoke", { method: "POST" }),
      ctx,
      {
        id: "gr_x",
        checks: [{ id: "default.regexMatch", parameters: { rule: "secret" } }],
        actions: { deny: false, async: false, soft_deny_200: false, on_error: "open", timeout_ms: 1_000 },
      },
      { input: "a secret" },
    );
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe("gateway.guardrail.input");
    expect(span!.attributes).toMatchObject({
      "gateway.guardrail.id": "gr_x",
      "gateway.guardrail.verdict": true,
      "gateway.organisation_id": "org_2",
      "gateway.trace_id": "trace-invoke-span",
    });
    expect(span!.events).toHaveLength(1);
  });
});
