import { loadFormat } from "../../formats/registry.ts";
import { streamFailureEvent } from "../../formats/stream-failure.ts";
import { isLateJson } from "../../../observe/logs/late-json.ts";
import { loadProvider } from "../../../providers/registry.ts";
import { errorChunkFailure } from "../../../providers/stream/openai-chunks.ts";
import { SseDecoder } from "../../../providers/stream/sse.ts";
import { type ChatUsage, UpstreamError } from "../../../providers/types.ts";
import { HttpError } from "../../../http/errors.ts";
import { type EngineIO, RoutingFailure } from "../../routing/engine.ts";
import { callTarget } from "../call-target.ts";
import { type AttemptRecord, newOutcome } from "../outcome.ts";
import { attemptStatus, recordAttempt } from "../plan.ts";
import { joinPieces } from "../stream/pipelines.ts";
import { type SseSource, sseSourceOf } from "../stream/sse-source.ts";
import { ChatContinuationWriter } from "./chat-writer.ts";
import { addCost, addUsage } from "./legs.ts";
import { MessagesContinuationWriter } from "./messages-writer.ts";
import type { ArmedContinuation, ContinuationSetup } from "./setup.ts";
import { OverlapTrimmer } from "./overlap.ts";
import { partialOf } from "./partial.ts";
import { continuationRequest } from "./request.ts";
import { ResponsesContinuationWriter } from "./responses-writer.ts";
import type { BrokenLeg } from "./slot.ts";
import type { ContinuationNote, ContinuationWriter } from "./writer.ts";

type Json = Record<string, any>;

/**
 * Finishes a streamed answer whose provider broke after content reached the client (a fallback with
 * `on_stream_failure: "continue"`): the targets after the broken one are asked in order, as the fallback would
 * have, with the original request plus the partial answer to continue from (request.ts). The first that answers
 * streams the rest into the client's stream (the overlap with what the client has is cut: overlap.ts), written as
 * more of the same answer (writer.ts). A continuation that breaks too is continued by the targets after it.
 *
 * Every leg is an attempt of the one request, with its own usage and cost; the request's usage and cost are their
 * sums (its log, its usage limits, the last chunk), and the last chunk says the answer was continued and by whom.
 * Undefined when the answer cannot be continued or no target answered: the stream then ends with its error.
 */
export async function continueStream(
  broken: BrokenLeg,
  setup: ContinuationSetup,
  armed: ArmedContinuation,
): Promise<SseSource | undefined> {
  const answer = (isLateJson(broken.answer) ? broken.answer.toJSON() : broken.answer) as Json;
  const partial = partialOf(setup.route, answer ?? {});
  if ("refused" in partial) return undefined;
  const { outcome } = setup;
  // The broken leg's usage (counted from its partial answer when the provider reported none) and cost.
  await broken.recordUsage(broken.usage, answer);
  const first = outcome.attempts?.at(-1);
  if (first) markLeg(first, "broke", broken.failure.message, outcome.usage, outcome.cost);
  const writer = writerFor(setup, answer, broken, partial.text);
  const run = new ContinuedStream(setup, armed, broken, partial.text, writer);
  return (await run.start()) ? run : undefined;
}

function writerFor(setup: ContinuationSetup, answer: Json, broken: BrokenLeg, text: string): ContinuationWriter {
  if (setup.route === "responses") return new ResponsesContinuationWriter(answer, broken.position?.lastSequence);
  if (setup.route === "messages") return new MessagesContinuationWriter(answer, broken.position?.openBlock, setup.body);
  return new ChatContinuationWriter(answer, setup.includeUsage, text);
}

function markLeg(
  attempt: AttemptRecord,
  stream: AttemptRecord["stream"],
  error: string | undefined,
  usage: ChatUsage | undefined,
  cost: AttemptRecord["cost"],
): void {
  attempt.stream = stream;
  if (error !== undefined) attempt.error = error;
  if (usage) attempt.usage = usage;
  if (cost) attempt.cost = cost;
}

/** A continuing leg: the target's stream as chat chunks, and what it is counted as. */
interface Leg {
  source: SseSource;
  decoder: SseDecoder;
  outcome: ReturnType<typeof newOutcome>;
  attempt: AttemptRecord;
  trimmer: OverlapTrimmer;
  provider: string;
  target: string;
  finishReason?: string;
  /** The leg sent its error event, or ended without finishing. */
  failure?: UpstreamError;
}

class ContinuedStream implements SseSource {
  readonly #setup: ContinuationSetup;
  readonly #writer: ContinuationWriter;
  readonly #from: ArmedContinuation["from"];
  /** Ends the continuing calls: the client left (its signal, or the SSE answer's while it handed over), or cancel(). */
  readonly #stop = new AbortController();
  readonly #signal: AbortSignal;
  /** The code of the first break (what the last chunk's note names). */
  readonly #reason: string;
  #rest: ArmedContinuation["rest"] | undefined;
  /** Everything the client has of the answer (the partial answer, then the continuation). */
  #text: string;
  /** Output tokens of the legs that broke: the continuation may write only what is left of the limit. */
  #spentTokens: number;
  #leg: Leg | undefined;
  /** The last break: what the client is told when no target is left. */
  #failure: UpstreamError;
  #unsent: Array<string | Uint8Array>;
  #ended = false;

  constructor(
    setup: ContinuationSetup,
    armed: ArmedContinuation,
    broken: BrokenLeg,
    text: string,
    writer: ContinuationWriter,
  ) {
    this.#setup = setup;
    this.#writer = writer;
    this.#from = armed.from;
    this.#rest = armed.rest;
    this.#signal = AbortSignal.any([setup.signal, broken.signal, this.#stop.signal]);
    this.#text = text;
    this.#spentTokens = setup.outcome.usage?.completion_tokens ?? 0;
    this.#failure = broken.failure;
    this.#reason = broken.failure.code ?? broken.failure.type ?? "upstream_stream_error";
    this.#unsent = broken.unsent;
  }

  /** Asks the next targets in order until one streams; false when none is left or none answered. */
  async start(): Promise<boolean> {
    const rest = this.#rest;
    this.#rest = undefined;
    if (!rest || this.#signal.aborted) return false;
    let leg: Leg | undefined;
    try {
      const success = await rest(this.#io((started) => (leg = started)));
      this.#rest = success.rest;
    } catch (error) {
      // Every target failed, or one was refused by a guardrail or a policy (HttpError): nobody continues.
      if (error instanceof RoutingFailure || error instanceof HttpError) return false;
      throw error;
    }
    this.#leg = leg;
    return leg !== undefined;
  }

  async next(): Promise<string | Uint8Array | null> {
    if (this.#ended) return null;
    const out: Array<string | Uint8Array> = this.#unsent.splice(0);
    for (;;) {
      const leg = this.#leg!;
      if (!leg.failure) {
        const read = await leg.source.next();
        if (this.#ended) return null;
        if (read !== null) {
          for (const event of leg.decoder.push(typeof read === "string" ? Buffer.from(read) : read))
            this.#take(leg, event.data, out);
          if (out.length > 0 && !leg.failure) return joinPieces(out);
          continue;
        }
        if (leg.finishReason !== undefined) {
          out.push(await this.#finish(leg));
          return joinPieces(out);
        }
        leg.failure = streamEnded();
      }
      // The client left (its leg then fails as cut off): settled as a client that went away.
      if (this.#signal.aborted) {
        await this.cancel();
        return null;
      }
      // The continuing leg broke too: the targets after it continue, from what the client has now.
      await leg.source.cancel().catch(() => {});
      await this.#settleLeg(leg, "broke", leg.failure);
      if (!(await this.start())) {
        out.push(this.#fail());
        return joinPieces(out);
      }
      if (this.#ended) return null;
    }
  }

  async cancel(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#stop.abort();
    const leg = this.#leg;
    if (leg) {
      await leg.source.cancel().catch(() => {});
      await this.#settleLeg(leg, "continued");
    }
    this.#setup.outcome.error = { status: 499, message: "client closed the stream", code: "client_closed_request" };
    this.#settle();
  }

  /** One event of the continuing leg's chat stream. */
  #take(leg: Leg, data: string, out: Array<string | Uint8Array>): void {
    if (data === "[DONE]" || leg.failure) return;
    let chunk: Json;
    try {
      chunk = JSON.parse(data);
    } catch {
      leg.failure = new UpstreamError(502, "The continuing provider's stream holds a chunk that is not JSON.");
      return;
    }
    leg.failure = errorChunkFailure(chunk);
    if (leg.failure) return;
    const choices: Json[] = Array.isArray(chunk?.choices) ? chunk.choices : [];
    const choice = choices.find((entry) => (entry?.index ?? 0) === 0);
    const content = choice?.delta?.content;
    if (typeof content === "string" && content !== "") {
      const sent = leg.trimmer.push(content);
      if (sent !== "") {
        this.#text += sent;
        out.push(this.#writer.text(sent));
      }
    }
    if (typeof choice?.finish_reason === "string") leg.finishReason = choice.finish_reason;
  }

  /** The continuing leg finished the answer: its last text, the end (every leg's usage), the bookkeeping. */
  async #finish(leg: Leg): Promise<string> {
    this.#ended = true;
    let sse = "";
    const held = leg.trimmer.end();
    if (held !== "") {
      this.#text += held;
      sse += this.#writer.text(held);
    }
    await this.#settleLeg(leg, "continued");
    const { outcome } = this.#setup;
    const note: ContinuationNote = {
      reason: this.#reason,
      from: this.#from,
      by: { provider: leg.provider, target: leg.target, model: leg.outcome.answeredModel },
    };
    outcome.continuation = note;
    sse += this.#writer.finish({ finishReason: leg.finishReason!, usage: outcome.usage ?? zeroUsage(), note });
    this.#settle();
    return sse;
  }

  /** No target is left to continue: the stream ends with the last break's error, in the client's format. */
  #fail(): string {
    this.#ended = true;
    const failure = this.#failure;
    this.#setup.outcome.error = this.#signal.aborted
      ? { status: 499, message: "client closed the stream", code: "client_closed_request" }
      : { status: failure.status, message: failure.message, code: failure.code };
    this.#settle();
    return streamFailureEvent(this.#setup.route, failure);
  }

  /** A leg is over: its usage and cost (once its own bookkeeping is done) go to its attempt and to the sums. */
  async #settleLeg(leg: Leg, stream: AttemptRecord["stream"], failure?: UpstreamError): Promise<void> {
    if (this.#leg === leg) this.#leg = undefined;
    await leg.outcome.done;
    const { outcome } = this.#setup;
    markLeg(leg.attempt, stream, failure?.message, leg.outcome.usage, leg.outcome.cost);
    outcome.usage = addUsage(outcome.usage, leg.outcome.usage);
    outcome.cost = addCost(outcome.cost, leg.outcome.cost);
    if (leg.outcome.usageEstimated) outcome.usageEstimated = true;
    outcome.responseChars = (outcome.responseChars ?? 0) + (leg.outcome.responseChars ?? 0);
    if (failure) {
      this.#failure = failure;
      this.#spentTokens += leg.outcome.usage?.completion_tokens ?? 0;
    }
  }

  /** The request's outcome, once: the whole answer for the log (the sums are already on it). */
  #settle(): void {
    const { outcome } = this.#setup;
    outcome.responseBody = this.#writer.answer();
    outcome.totalMs = performance.now() - this.#setup.startedAt;
    outcome.finish();
  }

  /** The engine's io for the continuing legs: each call asks a target to continue from what the client has. */
  #io(onLeg: (leg: Leg) => void): EngineIO {
    const setup = this.#setup;
    return {
      signal: this.#signal,
      queryContext: setup.queryContext,
      call: async (leaf, retry) => {
        const prepared = await setup.prepare(leaf);
        const provider = prepared.target.provider;
        const adapter = await loadProvider(provider);
        const chat = setup.route === "chat" ? prepared.body : (await loadFormat(setup.route))!.toChat(prepared.body);
        const body = continuationRequest({
          chat,
          partial: this.#text,
          prefill: adapter?.routes.chat?.continuesAssistantTurn === true,
          spentTokens: this.#spentTokens,
        });
        const attempt: AttemptRecord = { path: leaf.path, provider, retry, status: 0, ms: 0, stream: "continued" };
        recordAttempt(setup.outcome, attempt);
        const child = newOutcome("chat", String(body.model), true);
        const started = performance.now();
        try {
          const response = await callTarget({
            route: "chat",
            body,
            target: prepared.target,
            timeoutMs: prepared.timeoutMs,
            signal: this.#signal,
            requestId: setup.requestId,
            outcome: child,
            startedAt: started,
            trustedHosts: setup.trustedHosts,
            prices: prepared.prices,
            strict: true,
          });
          attempt.status = response.status;
          attempt.ms = performance.now() - started;
          onLeg({
            source: sseSourceOf(response),
            decoder: new SseDecoder(),
            outcome: child,
            attempt,
            trimmer: new OverlapTrimmer(this.#text),
            provider,
            target: leaf.path,
          });
          return response;
        } catch (thrown) {
          attempt.status = attemptStatus(thrown);
          attempt.ms = performance.now() - started;
          attempt.error = thrown instanceof Error ? thrown.message : String(thrown);
          throw thrown;
        }
      },
    };
  }
}

const streamEnded = () =>
  new UpstreamError(502, "The continuing provider's stream ended before the answer was finished.", {
    code: "upstream_stream_cut",
  });

const zeroUsage = (): ChatUsage => ({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
