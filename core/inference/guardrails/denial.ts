import { replayAsSse } from "../cache/replay.ts";
import { SSE_HEADERS } from "../gateway/stream/sse-source.ts";
import type { RouteKind, TransformContext } from "../../providers/types.ts";
import { UpstreamError } from "../../providers/types.ts";
import { loadedFormat } from "../formats/registry.ts";
import { errorShapeOf, streamFailureEvent } from "../formats/stream-failure.ts";
import { vendorErrorBody } from "../../http/error-shapes.ts";
import { formatEventText } from "../formats/format-events.ts";
import type { CheckVerdict, GuardrailVerdict } from "./types.ts";

/**
 * What the client receives about guardrails, in Portkey's shapes (its gateway's hooks middleware and response
 * handlers), so the `portkey-ai` SDK and Portkey users read it unchanged:
 * - `hook_results: {before_request_hooks, after_request_hooks}`, one entry per guardrail that held the request
 *   (`verdict`, `id`, `checks[]`, `feedback`, `deny`, `async`, `execution_time`, `type: "guardrail"`...), each
 *   check with its id, verdict and explanation;
 * - a denial: HTTP 446, `{"error": {"message", "type": "hooks_failed", "param": null, "code": null}, hook_results}`;
 * - `soft_deny_200`: HTTP 200, the denial as an answer (`finish_reason: "content_filter"`, usage zero), a stream
 *   when the request streamed.
 */

export const HOOKS_FAILED_MESSAGE =
  "The guardrail checks defined in the config failed. You can find more information in the `hook_results` object.";

export const GUARDRAIL_DENIED_STATUS = 446;
/** Portkey's status for an answer some guardrail failed without denying it ("Hooks failed"). */
export const HOOKS_FAILED_STATUS = 246;

export interface HookResults {
  before_request_hooks: Array<Record<string, unknown>>;
  after_request_hooks: Array<Record<string, unknown>>;
}

/** The verdicts of the guardrails that held a request, as Portkey's `hook_results`. */
export function hookResults(input: readonly GuardrailVerdict[], output: readonly GuardrailVerdict[]): HookResults {
  return { before_request_hooks: input.map(hookResult), after_request_hooks: output.map(hookResult) };
}

function hookResult(verdict: GuardrailVerdict): Record<string, unknown> {
  const passed = verdict.checks.filter((check) => check.verdict && !check.error).map((check) => check.id);
  const failed = verdict.checks.filter((check) => !check.verdict && !check.error).map((check) => check.id);
  const errored = verdict.checks.filter((check) => check.error).map((check) => check.id);
  return {
    verdict: verdict.verdict,
    id: verdict.id,
    ...(verdict.slug ? { slug: verdict.slug } : {}),
    ...(verdict.name ? { name: verdict.name } : {}),
    checks: verdict.checks.map((check) => checkResult(check, verdict.created_at)),
    feedback: {
      value: verdict.feedback?.value ?? 0,
      weight: verdict.feedback?.weight ?? 0,
      metadata: {
        successfulChecks: passed.join(", "),
        failedChecks: failed.join(", "),
        erroredChecks: errored.join(", "),
      },
    },
    transformed: verdict.transformed,
    deny: verdict.deny,
    async: verdict.async,
    execution_time: verdict.execution_time_ms,
    skipped: false,
    type: "guardrail",
    created_at: verdict.created_at,
  };
}

function checkResult(check: CheckVerdict, createdAt: string): Record<string, unknown> {
  return {
    id: check.id,
    ...(check.name ? { name: check.name } : {}),
    verdict: check.verdict,
    explanation: check.explanation,
    data: check.data ?? null,
    error: check.error ? { message: check.error } : null,
    transformed: check.transformed,
    execution_time: check.execution_time_ms,
    created_at: createdAt,
  };
}

/**
 * The 446 body: Portkey's error and the hook results. A route that speaks another vendor's API (Messages, Gemini)
 * has the error in that vendor's shape (core/http/error-shapes.ts), the hook results beside it.
 */
export function deniedBody(results: HookResults, route: RouteKind): Record<string, unknown> {
  const shape = errorShapeOf(route);
  const error =
    shape === "openai"
      ? { error: { message: HOOKS_FAILED_MESSAGE, type: "hooks_failed", param: null, code: null } }
      : vendorErrorBody(shape, {
          status: GUARDRAIL_DENIED_STATUS,
          type: "hooks_failed",
          message: HOOKS_FAILED_MESSAGE,
        });
  return { ...error, hook_results: results };
}

/** A request or answer refused by a guardrail with `deny`: HTTP 446 (JSON, whether or not the request streamed). */
export function deniedResponse(results: HookResults, route: RouteKind): Response {
  return new Response(JSON.stringify(deniedBody(results, route)), {
    status: GUARDRAIL_DENIED_STATUS,
    headers: { "content-type": "application/json" },
  });
}

/** The denial for people: which guardrail, and why its failed checks failed. */
export function denialMessage(denied: GuardrailVerdict): string {
  const label = denied.name ?? denied.slug ?? denied.id;
  const what = denied.phase === "input" ? "request" : "answer";
  const reasons = denied.checks
    .filter((check) => !check.verdict)
    .map((check) => check.explanation)
    .join(" ");
  return `The ${what} was blocked by the guardrail '${label}'.${reasons ? ` ${reasons}` : ""}`;
}

export interface AnswerHead {
  route: RouteKind;
  id: string;
  model: string;
  created?: number;
}

/** A `soft_deny_200` denial as the route's answer: the message as the content, `finish_reason: "content_filter"`. */
export function softDenialAnswer(head: AnswerHead, message: string): Record<string, unknown> {
  const format = loadedFormat(head.route);
  if (format) {
    // An inbound format's answer: the chat denial, translated as any chat answer is.
    const chatAnswer = softDenialAnswer({ ...head, route: "chat" }, message) as Record<string, any>;
    const ctx = { requestId: head.id, now: chatAnswer.created, model: head.model } as TransformContext;
    return format.fromChat(chatAnswer, { model: head.model }, ctx);
  }
  const chat = head.route !== "completions";
  const choice = chat
    ? {
        index: 0,
        message: { role: "assistant", content: message, refusal: null },
        logprobs: null,
        finish_reason: "content_filter",
      }
    : { index: 0, text: message, logprobs: null, finish_reason: "content_filter" };
  return {
    id: head.id,
    object: chat ? "chat.completion" : "text_completion",
    created: head.created ?? Math.floor(Date.now() / 1000),
    model: head.model,
    choices: [choice],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
}

/** The soft denial sent to the client: JSON with `hook_results`, or the answer's chunks when the request streamed. */
export function softDenialResponse(
  answer: Record<string, unknown>,
  results: HookResults,
  stream: { includeUsage: boolean } | undefined,
  route: RouteKind,
): Response {
  const format = loadedFormat(route);
  if (stream && format) {
    const events = format.replay(answer as Record<string, any>).map((event) => formatEventText(format, event));
    return new Response(events.join(""), { status: 200, headers: SSE_HEADERS });
  }
  if (stream) return new Response(replayAsSse(answer, stream.includeUsage), { status: 200, headers: SSE_HEADERS });
  return new Response(JSON.stringify({ ...answer, hook_results: results }), {
    status: 200,
    headers: { "content-type": "application/json" },
  });
}

/**
 * A stream whose answer a guardrail denied after its first chunks went out (the status is sent): the last
 * event is the 446 body, the error in OpenAI's shape that SDKs raise from a stream.
 */
export function deniedStreamEvent(results: HookResults, route: RouteKind): string {
  // An event-typed format ends with its own error event (its clients do not read OpenAI's error chunk).
  if (loadedFormat(route)) {
    const denial = new UpstreamError(GUARDRAIL_DENIED_STATUS, HOOKS_FAILED_MESSAGE, {
      type: "hooks_failed",
      code: "hooks_failed",
    });
    return streamFailureEvent(route, denial);
  }
  return `data: ${JSON.stringify(deniedBody(results, route))}\n\n`;
}

/**
 * A stream a `soft_deny_200` guardrail denied after its first chunks went out: one last chunk carrying the
 * denial message with `finish_reason: "content_filter"`, then `[DONE]`.
 */
export function softDenialStreamEnd(head: AnswerHead, message: string): string {
  const format = loadedFormat(head.route);
  // A format whose events add up ends with the denial's own answer (as chat's stream ends with its chunk).
  if (format?.eventsAddUp) {
    return format
      .replay(softDenialAnswer(head, message))
      .map((event) => formatEventText(format, event))
      .join("");
  }
  // An event-typed format's answer cannot take a last content chunk after its terminal events were held:
  // its stream ends with its error event carrying the denial message.
  if (format) return streamFailureEvent(head.route, new UpstreamError(200, message, { code: "content_filter" }));
  const chat = head.route !== "completions";
  const choice = chat
    ? { index: 0, delta: { content: message }, logprobs: null, finish_reason: "content_filter" }
    : { index: 0, text: message, logprobs: null, finish_reason: "content_filter" };
  const chunk = {
    id: head.id,
    object: chat ? "chat.completion.chunk" : "text_completion",
    created: head.created ?? Math.floor(Date.now() / 1000),
    model: head.model,
    choices: [choice],
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}
