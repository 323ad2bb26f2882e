import { describe, expect, it } from "vitest";
import {
  deniedResponse,
  deniedStreamEvent,
  denialMessage,
  hookResults,
  softDenialAnswer,
  softDenialResponse,
  softDenialStreamEnd,
} from "../../../../core/inference/guardrails/denial.ts";
import type { GuardrailVerdict } from "../../../../core/inference/guardrails/types.ts";
import { readSseEvents } from "../../../helpers/sse-events.ts";

const failed: GuardrailVerdict = {
  id: "gr_01",
  slug: "no-secrets",
  name: "No secrets",
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
      data: { match: "sk-" },
      transformed: false,
      execution_time_ms: 0.4,
    },
    { id: "default.webhook", verdict: true, explanation: "passed", transformed: false, execution_time_ms: 3 },
    {
      id: "default.modelGraded",
      verdict: true,
      explanation: "The check could not run (timed out after 50 ms); passed (on_error: open).",
      error: "timed out after 50 ms",
      transformed: false,
      execution_time_ms: 50,
    },
  ],
  feedback: { value: -1, weight: 1 },
  execution_time_ms: 51,
  created_at: "2026-11-24T10:00:00.000Z",
};

describe("hook_results", () => {
  it("lists each guardrail in Portkey's shape, each check with its id, verdict and explanation", () => {
    const results = hookResults([failed], []);
    expect(results.after_request_hooks).toEqual([]);
    const [hook] = results.before_request_hooks as any[];
    expect(hook).toMatchObject({
      verdict: false,
      id: "gr_01",
      slug: "no-secrets",
      deny: true,
      async: false,
      type: "guardrail",
      skipped: false,
      execution_time: 51,
      created_at: "2026-11-24T10:00:00.000Z",
      feedback: {
        value: -1,
        weight: 1,
        metadata: {
          successfulChecks: "default.webhook",
          failedChecks: "default.regexMatch",
          erroredChecks: "default.modelGraded",
        },
      },
    });
    expect(hook.checks[0]).toEqual({
      id: "default.regexMatch",
      verdict: false,
      explanation: "The text matches the pattern, which it must not.",
      data: { match: "sk-" },
      error: null,
      transformed: false,
      execution_time: 0.4,
      created_at: "2026-11-24T10:00:00.000Z",
    });
    expect(hook.checks[2].error).toEqual({ message: "timed out after 50 ms" });
  });
});

describe("denial answers", () => {
  it("446 with Portkey's error and the hook results", async () => {
    const response = deniedResponse(hookResults([failed], []), "chat");
    expect(response.status).toBe(446);
    const body = await response.json();
    expect(body.error).toEqual({
      message:
        "The guardrail checks defined in the config failed. You can find more information in the `hook_results` object.",
      type: "hooks_failed",
      param: null,
      code: null,
    });
    expect(body.hook_results.before_request_hooks[0].id).toBe("gr_01");
  });

  it("the denial message names the guardrail and why its failed checks failed", () => {
    expect(denialMessage(failed)).toBe(
      "The request was blocked by the guardrail 'No secrets'. The text matches the pattern, which it must not.",
    );
    expect(denialMessage({ ...failed, phase: "output", name: undefined })).toMatch(
      /^The answer was blocked by .*'no-secrets'/,
    );
  });

  it("soft deny: a 200 chat completion with content_filter, zero usage and the hook results", async () => {
    const answer = softDenialAnswer({ route: "chat", id: "chatcmpl-x", model: "gpt-4o-mini" }, "Blocked.");
    const response = softDenialResponse(answer, hookResults([failed], []), undefined, "chat");
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toMatchObject({
      id: "chatcmpl-x",
      object: "chat.completion",
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant", content: "Blocked." }, finish_reason: "content_filter" }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    });
    expect(body.hook_results.before_request_hooks).toHaveLength(1);
  });

  it("soft deny on completions answers a text completion", () => {
    const answer = softDenialAnswer({ route: "completions", id: "cmpl-x", model: "m" }, "Blocked.");
    expect(answer).toMatchObject({
      object: "text_completion",
      choices: [{ text: "Blocked.", finish_reason: "content_filter" }],
    });
  });

  it("soft deny as a stream: the message, content_filter, usage when asked, [DONE]", async () => {
    const answer = softDenialAnswer({ route: "chat", id: "chatcmpl-x", model: "gpt-4o-mini" }, "Blocked.");
    const response = softDenialResponse(answer, hookResults([failed], []), { includeUsage: true }, "chat");
    expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const events = readSseEvents(await response.text());
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((data) => JSON.parse(data));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe("Blocked.");
    expect(chunks.some((chunk) => chunk.choices[0]?.finish_reason === "content_filter")).toBe(true);
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it("stream endings: an error event carrying the 446 body, or a content_filter chunk then [DONE]", () => {
    const denied = readSseEvents(deniedStreamEvent(hookResults([], [{ ...failed, phase: "output" }]), "chat"));
    expect(denied).toHaveLength(1);
    const event = JSON.parse(denied[0]!);
    expect(event.error.type).toBe("hooks_failed");
    expect(event.hook_results.after_request_hooks[0].id).toBe("gr_01");

    const soft = readSseEvents(softDenialStreamEnd({ route: "chat", id: "c", model: "m", created: 1 }, "Blocked."));
    expect(soft[1]).toBe("[DONE]");
    expect(JSON.parse(soft[0]!).choices[0]).toEqual({
      index: 0,
      delta: { content: "Blocked." },
      logprobs: null,
      finish_reason: "content_filter",
    });
  });
});
