import { isCompleteAnswer, replayAsSse } from "../cache/replay.ts";
import type { InferenceOutcome } from "../gateway/outcome.ts";
import { sseResponse, sseSourceOf } from "../gateway/stream/sse-source.ts";
import type { RequestContext } from "../http/context.ts";
import { isLateJson } from "../logs/late-json.ts";
import { resolveLateJson } from "../logs/log-layout.ts";
import { MEDIA_ROUTES, type RouteKind } from "../providers/types.ts";
import { GuardrailBudget } from "./budget.ts";
import { findCheck } from "./checks/registry.ts";
import {
  deniedBody,
  deniedResponse,
  deniedStreamEvent,
  denialMessage,
  GUARDRAIL_DENIED_STATUS,
  HOOKS_FAILED_MESSAGE,
  HOOKS_FAILED_STATUS,
  hookResults,
  softDenialAnswer,
  softDenialResponse,
  softDenialStreamEnd,
} from "./denial.ts";
import { runGuardrails } from "./runner.ts";
import { guardStreamTail, readWholeStream, type StreamKind } from "./stream-output.ts";
import { loadedFormat } from "../formats/registry.ts";
import { typedEventSse } from "../gateway/stream/pipelines.ts";
import { type PhaseTexts, phaseTexts } from "./texts.ts";
import type {
  CheckEnvironment,
  CheckInput,
  GuardrailDefinition,
  GuardrailPhase,
  GuardrailVerdict,
  PhaseRun,
} from "./types.ts";

/**
 * The guardrail steps of one inference request (pipeline steps 4 and 7), loaded on first use by
 * core/guardrails/pipeline.ts once a request has guardrails:
 * - input, per target called: runs the guardrails not run yet for this request (a fallback to a target with the
 *   same ones does not run them again), writes a redaction into the body sent upstream, or answers the denial;
 * - output, on the answer: JSON is judged whole (redacted, denied, or passed with `hook_results`); a stream's
 *   tail is held until its checks have judged the assembled answer (stream-output.ts), or, when a guardrail may
 *   redact, the whole stream is read first and answered anew.
 * Verdicts go to the outcome (the request log); async guardrails run beside the request and the log waits for
 * them (`outcome.guardrailsDone`).
 */

export interface GuardedRequest {
  route: RouteKind;
  request: Request;
  ctx: RequestContext;
  outcome: InferenceOutcome & { finish(): void };
  /** The id of an answer the gateway makes itself (a soft denial before any provider answered). */
  requestId: string;
  env: CheckEnvironment;
  /** Told every verdict once known, async ones included (spans). */
  onVerdicts?(verdicts: readonly GuardrailVerdict[]): void;
}

export type InputResult = { body: Record<string, any>; answer?: undefined } | { answer: Response; body?: undefined };

const ZERO_USAGE = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };

export class GuardrailPhases {
  readonly #request: GuardedRequest;
  /** The verdicts of guardrails that held the request, per phase: the answer's `hook_results`. */
  readonly #input: GuardrailVerdict[] = [];
  readonly #output: GuardrailVerdict[] = [];
  /** Input guardrails already run for this request, by id. */
  readonly #ran = new Set<string>();
  /** The input texts a redaction rewrote, and what it made of them: reused for the next target's body. */
  #rewrite?: { from: readonly string[]; to: readonly string[] };
  /** The characters this request's checks may still read, both phases together (budget.ts). */
  readonly #budget: GuardrailBudget;
  /** A guardrail refused the request: the answer is the denial, nothing more is judged. */
  denied = false;

  constructor(request: GuardedRequest) {
    this.#request = request;
    this.#budget = new GuardrailBudget(request.ctx.services.settings.GATEWAY_GUARDRAIL_BUDGET_CHARS);
  }

  /** Input guardrails of one target on the body about to be sent to it. */
  async input(definitions: readonly GuardrailDefinition[], body: Record<string, any>): Promise<InputResult> {
    const { route, outcome } = this.#request;
    let texts = phaseTexts(route, "input", body);
    const original = texts.parts;
    // A redaction made for an earlier target applies to this one's body when it holds the same texts.
    if (this.#rewrite && sameTexts(original, this.#rewrite.from)) {
      body = texts.rewrite(body, this.#rewrite.to);
      texts = phaseTexts(route, "input", body);
    }
    const pending = definitions.filter((definition) => !this.#ran.has(definition.id));
    if (pending.length === 0) return { body };
    for (const definition of pending) this.#ran.add(definition.id);
    const run = await this.#run("input", pending, body, texts);
    if (run.denied) return { answer: this.#denyRequest(run.denied, body) };
    if (run.transformedParts) {
      body = texts.rewrite(body, run.transformedParts);
      this.#rewrite = { from: original, to: run.transformedParts };
      // The log keeps the request as redacted, never the texts the redaction took out.
      const logged = outcome.requestBody as Record<string, any> | undefined;
      if (logged) {
        const loggedTexts = phaseTexts(route, "input", logged);
        if (sameTexts(loggedTexts.parts, original))
          outcome.requestBody = loggedTexts.rewrite(logged, run.transformedParts);
      }
    }
    return { body };
  }

  /** Output guardrails on a target's answer (`body`: the request as sent to it). */
  async output(
    definitions: readonly GuardrailDefinition[],
    response: Response,
    body: Record<string, any>,
  ): Promise<Response> {
    if (this.denied) return response;
    const contentType = response.headers.get("content-type") ?? "";
    // Audio, images in bytes, text transcripts and their streams are relayed as they come: nothing to rewrite.
    if (MEDIA_ROUTES.has(this.#request.route) && !contentType.startsWith("application/json")) return response;
    // Embeddings answers hold no text to judge.
    const judged = this.#request.route === "embeddings" ? [] : definitions;
    const stream = contentType.startsWith("text/event-stream");
    return stream ? this.#outputStream(judged, response, body) : this.#outputJson(judged, response, body);
  }

  async #outputJson(
    definitions: readonly GuardrailDefinition[],
    response: Response,
    body: Record<string, any>,
  ): Promise<Response> {
    const { route, outcome } = this.#request;
    // Nothing to judge or to add: the answer goes as it is.
    if (definitions.length === 0 && this.#input.length === 0) return response;
    // Only the input guardrails' results to add: the answer's text is enough (it is not parsed again).
    if (definitions.length === 0) return this.#withHookResults(await answerTextOf(outcome, response), response);
    let { text, answer } = await answerOf(outcome, response);
    if (!isRecord(answer))
      return new Response(text, { status: response.status, headers: Object.fromEntries(response.headers) });
    if (definitions.length > 0) {
      const texts = phaseTexts(route, "output", answer);
      const run = await this.#run("output", definitions, body, texts, answer);
      if (run.denied) return this.#denyAnswer(run.denied, answer, body, false);
      if (run.transformedParts) {
        answer = texts.rewrite(answer, run.transformedParts);
        text = JSON.stringify(answer);
        outcome.responseBody = answer;
        outcome.responseChars = text.length;
      }
    }
    return this.#withHookResults(text, response);
  }

  async #outputStream(
    definitions: readonly GuardrailDefinition[],
    response: Response,
    body: Record<string, any>,
  ): Promise<Response> {
    const { route, outcome } = this.#request;
    const kind: StreamKind = loadedFormat(route) ?? (route === "completions" ? "text" : "chat");
    const status = this.#status(response.status);
    const headers = Object.fromEntries(response.headers);
    const held = definitions.filter((definition) => !definition.actions.async);
    if (held.length === 0) {
      // Async guardrails judge the answer once it is complete, never holding it.
      if (definitions.length > 0) this.#holdLog(outcome.done.then(() => this.#judgeLoggedAnswer(definitions, body)));
      return status === response.status ? response : sseResponse(sseSourceOf(response), headers, status);
    }
    if (await mayRewrite(held)) return this.#outputWholeStream(definitions, response, body, kind, headers);

    let settle!: () => void;
    this.#holdLog(new Promise<void>((resolve) => (settle = resolve)));
    const guarded = guardStreamTail(sseSourceOf(response), kind, async (answer) => {
      try {
        const texts = phaseTexts(route, "output", answer);
        const run = await this.#run("output", definitions, body, texts, answer);
        if (!run.denied) return undefined;
        this.denied = true;
        if (run.denied.soft_deny_200) return softDenialStreamEnd(headOf(route, answer), denialMessage(run.denied));
        this.#noteDenied();
        return deniedStreamEvent(hookResults(this.#input, this.#output), route);
      } finally {
        settle();
      }
    });
    return sseResponse(
      {
        next: async () => {
          const piece = await guarded.next();
          if (piece === null) settle();
          return piece;
        },
        cancel: async () => {
          settle();
          await guarded.cancel();
        },
      },
      headers,
      status,
    );
  }

  /** A stream a guardrail may redact: read whole, judged, then answered anew (a denial answers 446 as JSON). */
  async #outputWholeStream(
    definitions: readonly GuardrailDefinition[],
    response: Response,
    body: Record<string, any>,
    kind: StreamKind,
    headers: Record<string, string>,
  ): Promise<Response> {
    const { route, outcome, ctx } = this.#request;
    const whole = await readWholeStream(sseSourceOf(response), kind, ctx.signal);
    if (!whole.answer) return new Response(whole.text, { status: this.#status(response.status), headers });
    const texts = phaseTexts(route, "output", whole.answer);
    const run = await this.#run("output", definitions, body, texts, whole.answer);
    if (run.denied) return this.#denyAnswer(run.denied, whole.answer, body, true);
    let text = whole.text;
    if (run.transformedParts) {
      const answer = texts.rewrite(whole.answer, run.transformedParts);
      const format = loadedFormat(route);
      text = format
        ? format.replay(answer).map(typedEventSse).join("")
        : replayAsSse(answer, body.stream_options?.include_usage === true);
      // After the stream's own bookkeeping (which notes what the provider sent), the log keeps the redaction.
      this.#holdLog(
        outcome.done.then(() => {
          outcome.responseBody = answer;
        }),
      );
    }
    return new Response(text, { status: this.#status(response.status), headers });
  }

  /** Async output guardrails of a stream, on the answer as logged once the stream is over. */
  async #judgeLoggedAnswer(definitions: readonly GuardrailDefinition[], body: Record<string, any>): Promise<void> {
    const { route, outcome } = this.#request;
    const answer = resolveLateJson(outcome.responseBody);
    if (outcome.error || !isRecord(answer)) return;
    const format = loadedFormat(route);
    if (!(format ? format.isComplete(answer) : isCompleteAnswer(answer))) return;
    await this.#run("output", definitions, body, phaseTexts(route, "output", answer), answer);
  }

  /** Runs one phase's guardrails and records their verdicts. */
  async #run(
    phase: GuardrailPhase,
    definitions: readonly GuardrailDefinition[],
    body: Record<string, any>,
    texts: PhaseTexts,
    answer?: Record<string, unknown>,
  ): Promise<PhaseRun> {
    const { route, request, ctx, env } = this.#request;
    const input: Omit<CheckInput, "signal"> = {
      phase,
      route,
      text: texts.text,
      parts: texts.parts,
      request: body,
      ...(answer ? { response: answer } : {}),
      model: typeof body.model === "string" ? body.model : "",
      metadata: ctx.gateway?.metadata ?? {},
      headers: request.headers,
      env,
    };
    const run = await runGuardrails(definitions, input, {
      signal: ctx.signal,
      waitUntil: (work) => {
        ctx.waitUntil(work);
        this.#holdLog(work);
      },
      textOf: texts.textOf,
      onAsyncVerdict: (verdict) => this.#record([verdict]),
      budget: this.#budget,
      threads: ctx.services.guardrailThreads,
    });
    (phase === "input" ? this.#input : this.#output).push(...run.verdicts);
    this.#record(run.verdicts);
    return run;
  }

  #record(verdicts: readonly GuardrailVerdict[]): void {
    if (verdicts.length === 0) return;
    const { outcome, onVerdicts } = this.#request;
    outcome.guardrails ??= [];
    outcome.guardrails.push(...verdicts);
    onVerdicts?.(verdicts);
  }

  /** The log is written once this work is done too. */
  #holdLog(work: Promise<unknown>): void {
    const { outcome } = this.#request;
    const settled = work.then(ignore, ignore);
    const previous = outcome.guardrailsDone;
    outcome.guardrailsDone = previous ? Promise.all([previous, settled]).then(ignore) : settled;
  }

  /** An input guardrail denied: no provider is called, the denial is the answer. */
  #denyRequest(denied: GuardrailVerdict, body: Record<string, any>): Response {
    const { route, outcome, ctx, requestId } = this.#request;
    this.denied = true;
    const results = hookResults(this.#input, this.#output);
    let response: Response;
    if (denied.soft_deny_200 && route !== "embeddings") {
      const answer = softDenialAnswer(
        { route, id: requestId, model: typeof body.model === "string" ? body.model : "" },
        denialMessage(denied),
      );
      outcome.status = 200;
      outcome.usage = { ...ZERO_USAGE };
      outcome.responseBody = answer;
      response = softDenialResponse(answer, results, streamOf(body), route);
    } else {
      this.#noteDenied();
      outcome.status = GUARDRAIL_DENIED_STATUS;
      outcome.responseBody = deniedBody(results);
      response = deniedResponse(results);
    }
    outcome.totalMs = performance.now() - ctx.startedAt;
    outcome.finish();
    return response;
  }

  /** An output guardrail denied a whole answer (JSON, or a stream read whole). */
  #denyAnswer(
    denied: GuardrailVerdict,
    answer: Record<string, unknown>,
    body: Record<string, any>,
    streamed: boolean,
  ): Response {
    this.denied = true;
    const results = hookResults(this.#input, this.#output);
    if (denied.soft_deny_200) {
      const softAnswer = softDenialAnswer(headOf(this.#request.route, answer), denialMessage(denied));
      return softDenialResponse(softAnswer, results, streamed ? streamOf(body) : undefined, this.#request.route);
    }
    this.#noteDenied();
    return deniedResponse(results);
  }

  /** The request's log and analytics count the denial as its status. */
  #noteDenied(): void {
    this.#request.outcome.error = {
      status: GUARDRAIL_DENIED_STATUS,
      message: HOOKS_FAILED_MESSAGE,
      code: "hooks_failed",
    };
  }

  /**
   * 246 (Portkey's "hooks failed") when a guardrail that held the request failed without denying it; the log
   * then records the 246 the client got.
   */
  #status(status: number): number {
    const failed = [...this.#input, ...this.#output].some((verdict) => !verdict.verdict);
    if (!failed || status !== 200) return status;
    this.#request.outcome.clientStatus = HOOKS_FAILED_STATUS;
    return HOOKS_FAILED_STATUS;
  }

  /** A JSON answer with `hook_results` added (as Portkey does) when guardrails held the request. */
  #withHookResults(text: string, response: Response): Response {
    const status = this.#status(response.status);
    // Appended to the answer's own text: an answer passed through as the provider's bytes is not serialised again.
    const added =
      this.#input.length === 0 && this.#output.length === 0
        ? undefined
        : withMember(text, "hook_results", JSON.stringify(hookResults(this.#input, this.#output)));
    const body = added ?? text;
    // The answer's own headers are kept as they are (no copy), unless one describes the old body's length.
    if (!response.headers.has("content-length")) return new Response(body, { status, headers: response.headers });
    const headers = new Headers(response.headers);
    headers.delete("content-length");
    return new Response(body, { status, headers });
  }
}

/** A JSON object's text with one more member written before its closing brace; undefined when not an object. */
export function withMember(text: string, name: string, valueJson: string): string | undefined {
  let end = text.length - 1;
  while (end >= 0 && isJsonSpace(text.charCodeAt(end))) end--;
  let start = 0;
  while (start < end && isJsonSpace(text.charCodeAt(start))) start++;
  if (text[start] !== "{" || text[end] !== "}") return undefined;
  let inner = end - 1;
  while (inner > start && isJsonSpace(text.charCodeAt(inner))) inner--;
  const separator = inner > start ? "," : "";
  return `${text.slice(0, end)}${separator}${JSON.stringify(name)}:${valueJson}}`;
}

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** A JSON answer's text, as the pipeline noted it on the outcome, or read from the Response. */
async function answerTextOf(outcome: InferenceOutcome, response: Response): Promise<string> {
  const noted = outcome.responseBody;
  if (isLateJson(noted) && noted.late.kind === "json-text") return noted.late.text;
  if (isRecord(noted)) return JSON.stringify(noted);
  return response.text();
}

/**
 * A JSON answer's text and value. The pipeline noted both on the outcome (the provider's text as it came, or a
 * cached answer's), so the Response's body is not read again; it is only when the outcome has neither.
 */
async function answerOf(outcome: InferenceOutcome, response: Response): Promise<{ text: string; answer: unknown }> {
  const noted = outcome.responseBody;
  if (isLateJson(noted) && noted.late.kind === "json-text") return { text: noted.late.text, answer: noted.toJSON() };
  if (isRecord(noted)) return { text: JSON.stringify(noted), answer: noted };
  const text = await response.text();
  try {
    return { text, answer: JSON.parse(text) };
  } catch {
    return { text, answer: undefined };
  }
}

/** Whether a held guardrail has a check that may rewrite the texts (a redaction): a stream is then read whole. */
async function mayRewrite(definitions: readonly GuardrailDefinition[]): Promise<boolean> {
  for (const definition of definitions) {
    for (const spec of definition.checks) {
      if (spec.is_enabled === false) continue;
      const check = await findCheck(spec.id);
      if (!check?.rewrites) continue;
      await check.load?.();
      const parsed = check.parameters.safeParse(spec.parameters ?? {});
      if (parsed.success && check.rewrites(parsed.data)) return true;
    }
  }
  return false;
}

function headOf(route: RouteKind, answer: Record<string, unknown>) {
  return {
    route,
    id: typeof answer.id === "string" ? answer.id : "",
    model: typeof answer.model === "string" ? answer.model : "",
    ...(typeof answer.created === "number" ? { created: answer.created } : {}),
  };
}

function streamOf(body: Record<string, any>): { includeUsage: boolean } | undefined {
  return body.stream === true ? { includeUsage: body.stream_options?.include_usage === true } : undefined;
}

function sameTexts(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((text, index) => text === b[index]);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function ignore(): void {}
