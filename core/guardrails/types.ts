import type * as z from "zod";
import type { RouteKind } from "../providers/types.ts";
import type { GuardrailBudget } from "./budget.ts";

/**
 * Guardrails (spec 1, 4.8, 5.5, 6, 7): checks run on a request's input before the provider is called and on
 * its answer after. The shapes here are shared by the check library (core/guardrails/checks), the runner and
 * the pipeline (core/guardrails), and the control plane (core/control/guardrails-*).
 *
 * Portkey's shapes are kept where its SDK and configs use them: a guardrail holds `checks[]`
 * (`{id, parameters, name?, is_enabled?}`) and `actions` (`deny`, `async`, `on_success`, `on_fail`); a config
 * names guardrails in `input_guardrails` / `output_guardrails` (or the older `before_request_hooks` /
 * `after_request_hooks`); a verdict is `true` when the check passed.
 */

export type GuardrailPhase = "input" | "output";

/** One check of a guardrail, as stored and as the API shows it. */
export interface CheckSpec {
  /** The check's id in the registry, e.g. `default.regexMatch`. */
  id: string;
  parameters: Record<string, unknown>;
  name?: string;
  /** false: kept in the guardrail, never run. */
  is_enabled?: boolean;
}

/** Written to the trace's feedback when the guardrail passes (`on_success`) or fails (`on_fail`). */
export interface GuardrailFeedback {
  value: number;
  weight: number;
  metadata?: string;
}

export interface GuardrailActions {
  /** A failed verdict blocks the request (HTTP 446, or 200 with `soft_deny_200`). Else it is only recorded. */
  deny: boolean;
  /** Run without holding the request: the verdict is only logged; never blocks, never rewrites. */
  async: boolean;
  /** With `deny`: answer HTTP 200 with the denial as a chat completion (a stream when streaming) instead of 446. */
  soft_deny_200: boolean;
  /**
   * A check that throws, times out or is over the request's guardrail budget (budget.ts): `open` passes it (the
   * error is logged; default), `closed` fails it.
   */
  on_error: "open" | "closed";
  /** Per-check time limit in ms, from when the check starts (waiting for a guardrail thread included). */
  timeout_ms: number;
  on_success?: { feedback?: GuardrailFeedback };
  on_fail?: { feedback?: GuardrailFeedback };
}

export const DEFAULT_CHECK_TIMEOUT_MS = 5_000;
export const MAX_CHECK_TIMEOUT_MS = 60_000;

/** A guardrail ready to run: a stored one (id `gr_...`) or one written inline in a config. */
export interface GuardrailDefinition {
  id: string;
  slug?: string;
  name?: string;
  /** The stored version that ran (absent inline). */
  version?: number;
  checks: CheckSpec[];
  actions: GuardrailActions;
}

/**
 * What a check sees. `text` is what most checks judge: on input, the text of the last message (chat), the
 * prompt (completions) or the last input (embeddings); on output, the text of the first choice. `parts` are
 * every text segment of the phase in order (every message's text parts on input, every choice on output):
 * what redacting checks rewrite.
 */
export interface CheckInput {
  phase: GuardrailPhase;
  route: RouteKind | "passthrough";
  text: string;
  parts: string[];
  /** The request body as the client sent it (after input redactions, on output). */
  request: Record<string, unknown>;
  /** The answer (OpenAI shape; a stream's assembled answer). Output phase only. */
  response?: Record<string, unknown>;
  /** The model the client asked for. */
  model: string;
  /** The request's metadata (`x-gateway-metadata`). */
  metadata: Record<string, string>;
  /** The request's headers (read by the JWT check); never forwarded anywhere by a check. */
  headers: Headers;
  /** Aborted at the check's timeout or when the client leaves. */
  signal: AbortSignal;
  env: CheckEnvironment;
}

/** What checks may reach beyond their input. Every outbound call goes through the gateway's SSRF guard. */
export interface CheckEnvironment {
  /**
   * POSTs JSON to a webhook: the URL must pass the custom-host rules (core/security/custom-host.ts), the
   * connection the guarded dispatcher; `headers` are the check's own (credential-shaped request headers are
   * never added). Answers the status and the parsed JSON body (undefined when not JSON).
   */
  postJson(
    url: string,
    body: unknown,
    options: { headers?: Record<string, string>; timeoutMs: number; signal: AbortSignal },
  ): Promise<{ status: number; json: unknown }>;
  /** GETs JSON (a JWKS) under the same rules as `postJson`; bounded in size. */
  getJson(url: string, options: { timeoutMs: number; signal: AbortSignal }): Promise<{ status: number; json: unknown }>;
  /**
   * Calls the gateway's own inference pipeline as a sub-request of this one (routing, credentials, retries,
   * cost; logged as its own request): `config` is a saved config id/slug or an inline config object.
   */
  infer(
    route: "chat" | "moderations",
    body: Record<string, unknown>,
    config: string | Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ status: number; json: unknown }>;
}

export interface CheckResult {
  /** true: the check passed. */
  verdict: boolean;
  /** One sentence for people: why it passed or failed. */
  explanation: string;
  /** Details (matched words, counts, detected categories...), shown in the verdict; no secrets, no full texts. */
  data?: Record<string, unknown>;
  /** A redacting check's rewrite of `parts` (same length and order). The verdict of a rewrite is true. */
  transformedParts?: string[];
}

/** A built-in check. `parameters` is validated when a guardrail is saved or an inline config compiled. */
export interface CheckDefinition<P = any> {
  id: string;
  /** Other ids accepted for it (Portkey's plugin names). */
  aliases?: readonly string[];
  /** What it does, for the docs and the OpenAPI description. */
  description: string;
  /** The phases it makes sense in (default both). */
  phases?: readonly GuardrailPhase[];
  parameters: z.ZodType<P>;
  /** Imports what the check needs (a library, an engine); awaited before `problem` and `run`. */
  load?(): Promise<void>;
  /** What the schema cannot say is wrong with valid parameters (a pattern that does not compile...). */
  problem?(parameters: P): string | undefined;
  /**
   * Whether the check may rewrite the texts with these parameters (PII with `redact`, a webhook): such checks
   * run first, one after another, each on the previous one's rewrite; the others then run concurrently on the
   * result. A rewrite from a check that does not declare it is ignored.
   */
  rewrites?(parameters: P): boolean;
  /**
   * How many characters of its input the check reads with these parameters (default: the judged text's length;
   * 0 for a check that reads only the model, metadata or headers). It is what the check spends of the request's
   * guardrail budget, and what decides whether it is judged on the event loop or on a worker thread (budget.ts).
   */
  cost?(input: Pick<CheckInput, "text" | "parts">, parameters: P): number;
  /**
   * True when, with these parameters, the check reads nothing but `phase`, `route`, `text`, `parts`, `model` and
   * `metadata` (no `env`, `headers`, `request` or `response`, no `signal` to obey): it may then be judged on a
   * worker thread (`CheckThreads`), where a long text does not hold the event loop and its time limit stops it.
   */
  selfContained?(parameters: P): boolean;
  run(input: CheckInput, parameters: P): Promise<CheckResult> | CheckResult;
}

/** What a self-contained check is given on a worker thread. */
export type ThreadedCheckInput = Pick<CheckInput, "phase" | "route" | "text" | "parts" | "model" | "metadata">;

/**
 * Judges self-contained checks on worker threads (the platform's: core/platform/node/check-threads.ts). A check
 * runs once a thread is free; when `signal` aborts (its time limit, or the client left) it is dropped from the
 * queue or its thread is stopped, and the promise rejects with the signal's reason.
 */
export interface CheckThreads {
  run(check: { id: string; parameters: unknown; input: ThreadedCheckInput }, signal: AbortSignal): Promise<CheckResult>;
}

/** One check's outcome, as logged and returned (446 body, invoke). */
export interface CheckVerdict {
  id: string;
  name?: string;
  verdict: boolean;
  explanation: string;
  data?: Record<string, unknown>;
  /** The check threw or timed out: its message (verdict then follows `on_error`). */
  error?: string;
  /** The check rewrote the texts (redaction). */
  transformed: boolean;
  execution_time_ms: number;
}

/** One guardrail's outcome. */
export interface GuardrailVerdict {
  id: string;
  slug?: string;
  name?: string;
  phase: GuardrailPhase;
  /** true when every enabled check passed. */
  verdict: boolean;
  deny: boolean;
  async: boolean;
  soft_deny_200: boolean;
  transformed: boolean;
  checks: CheckVerdict[];
  feedback?: GuardrailFeedback;
  execution_time_ms: number;
  created_at: string;
}

/** What running one phase's guardrails gave (core/guardrails/runner.ts `runGuardrails`). */
export interface PhaseRun {
  /** Verdicts of the guardrails that held the request (async ones are added to the log when they finish). */
  verdicts: GuardrailVerdict[];
  /** The first failed guardrail with `deny`: the request is refused (446, or 200 with `soft_deny_200`). */
  denied?: GuardrailVerdict;
  /** The phase's texts as redacting checks rewrote them (same order as `CheckInput.parts`); absent: unchanged. */
  transformedParts?: string[];
}

/**
 * The runner's signature: runs the definitions' enabled checks over one phase's input. Synchronous guardrails
 * run concurrently and are awaited (each check bounded by its `timeout_ms` and paid for from `budget`, errors
 * following `on_error`); a redacting check's rewrite feeds the checks after it. Async guardrails start once those
 * are judged and are handed to `waitUntil`; their verdicts reach `onAsyncVerdict` (the request log) when done.
 */
export type RunGuardrails = (
  definitions: readonly GuardrailDefinition[],
  input: Omit<CheckInput, "signal">,
  options: {
    signal: AbortSignal;
    waitUntil(work: Promise<unknown>): void;
    /** The judged text of rewritten parts (default: the last part). */
    textOf?(parts: readonly string[]): string;
    onAsyncVerdict?(verdict: GuardrailVerdict): void;
    /** The request's guardrail budget, shared by its phases (absent: unbounded). */
    budget?: GuardrailBudget;
    /** Where checks of long texts are judged off the event loop (absent: on it, as every other check). */
    threads?: CheckThreads;
  },
) => Promise<PhaseRun>;
