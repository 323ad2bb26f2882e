import type { CheckEnvironment, CheckInput } from "../../../../../core/inference/guardrails/types.ts";

/**
 * Builds the `CheckInput` a check sees, for the check tests: a chat request (input phase) or a chat request and
 * its answer (output phase) around `text`, a signal that is never aborted, and a fake environment whose calls
 * are answered by the test's own handlers (and recorded).
 */

type Answer = { status: number; json: unknown };

export interface FakeEnvironmentHandlers {
  getJson?(url: string, options: { timeoutMs: number; signal: AbortSignal }): Answer | Promise<Answer>;
  postJson?(
    url: string,
    body: unknown,
    options: { headers?: Record<string, string>; timeoutMs: number; signal: AbortSignal },
  ): Answer | Promise<Answer>;
  infer?(
    route: "chat" | "moderations",
    body: Record<string, unknown>,
    config: string | Record<string, unknown>,
  ): Answer | Promise<Answer>;
}

export interface FakeEnvironment extends CheckEnvironment {
  /** Every call made, in order: the method and its first argument (the URL, or the route for `infer`). */
  calls: Array<{ method: "getJson" | "postJson" | "infer"; target: string; body?: unknown }>;
}

/** An environment answering with the handlers given; a call no handler covers fails the test. */
export function fakeEnvironment(handlers: FakeEnvironmentHandlers = {}): FakeEnvironment {
  const calls: FakeEnvironment["calls"] = [];
  const unexpected = (method: string) => {
    throw new Error(`this test does not expect env.${method}`);
  };
  return {
    calls,
    async getJson(url, options) {
      calls.push({ method: "getJson", target: url });
      return handlers.getJson ? handlers.getJson(url, options) : unexpected("getJson");
    },
    async postJson(url, body, options) {
      calls.push({ method: "postJson", target: url, body });
      return handlers.postJson ? handlers.postJson(url, body, options) : unexpected("postJson");
    },
    async infer(route, body, config) {
      calls.push({ method: "infer", target: route, body });
      return handlers.infer ? handlers.infer(route, body, config) : unexpected("infer");
    },
  };
}

/** A fixed answer per URL for `getJson` (404 for any other URL). */
export const jsonByUrl =
  (answers: Record<string, unknown>): NonNullable<FakeEnvironmentHandlers["getJson"]> =>
  (url) =>
    url in answers ? { status: 200, json: answers[url] } : { status: 404, json: { error: "not found" } };

export interface InputOptions extends Partial<Omit<CheckInput, "headers" | "env">> {
  headers?: HeadersInit;
  env?: CheckEnvironment;
}

/**
 * A check's input around `text`: on input, a chat request whose last user message is `text`; on output, that
 * request (asking `prompt`) and an answer whose first choice is `text`. Anything else may be overridden.
 */
export function checkInput(options: InputOptions & { prompt?: string } = {}): CheckInput {
  const { prompt, headers, env, ...overrides } = options;
  const phase = overrides.phase ?? "input";
  const text = overrides.text ?? "";
  const model = overrides.model ?? "gpt-4o-mini";
  const question = phase === "input" ? text : (prompt ?? "Answer the question.");
  const request = overrides.request ?? {
    model,
    messages: [
      { role: "system", content: "You are a helpful assistant." },
      { role: "user", content: question },
    ],
  };
  const response =
    phase === "output"
      ? (overrides.response ?? {
          id: "chatcmpl-test",
          object: "chat.completion",
          model,
          choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        })
      : overrides.response;
  return {
    phase,
    route: overrides.route ?? "chat",
    text,
    parts: overrides.parts ?? (phase === "input" ? ["You are a helpful assistant.", text] : [text]),
    request,
    response,
    model,
    metadata: overrides.metadata ?? {},
    headers: new Headers(headers),
    signal: overrides.signal ?? new AbortController().signal,
    env: env ?? fakeEnvironment(),
  };
}
