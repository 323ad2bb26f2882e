import { type SseSource, sseResponse, sseSourceOf } from "../../../inference/gateway/stream/sse-source.ts";
import { HttpError } from "../../../http/errors.ts";
import { SseDecoder } from "../../../providers/stream/sse.ts";
import type { ModelStep, StopReason, ToolLoopRun } from "./loop-run.ts";
import { type ChatToolCall, runToolCalls, splitToolCalls } from "./run-tools.ts";

/**
 * The tool loop for a streamed answer (`stream: true`). Every model call streams; its chunks reach the client as
 * they arrive (text included, so a model that says something before calling a tool is heard at once), all under
 * one completion id, except what only the loop may decide about: tool call deltas and the finish chunk are held
 * until the call ends. If it called server-side MCP tools only, they run and the next call's chunks follow in the
 * same stream; otherwise the client's tool calls (if any) and the finish chunk are sent, then one usage chunk
 * summed over all calls (when `stream_options.include_usage`), then `[DONE]`. A call that fails after the first
 * has streamed ends the stream with an OpenAI error event, as any stream failure does.
 */
export async function runStreamLoop(
  run: ToolLoopRun,
  firstBody: Record<string, any>,
  sink: StreamSink = chatSink(firstBody.stream_options?.include_usage === true),
): Promise<Response> {
  // The first call is made before answering: its failure (or a refusal) is the HTTP answer, as without tools.
  const first = await run.callModel(firstBody);
  if (first.response.status !== 200 || !isEventStream(first.response)) {
    run.settle();
    return first.response;
  }
  const live: LiveStep = { cancelled: false };
  const steps = loopEvents(run, first, firstBody, sink, live);
  const source: SseSource = {
    async next() {
      const { value, done } = await steps.next();
      return done ? null : value;
    },
    async cancel() {
      live.cancelled = true;
      await live.source?.cancel();
      await steps.return(undefined);
      run.settle(undefined, new HttpError(499, "The client closed the request.", { code: "client_closed_request" }));
    },
  };
  const headers: Record<string, string> = {};
  for (const name of ["x-gateway-provider", "x-gateway-last-used-option-index", "x-gateway-retry-attempt-count"]) {
    const value = first.response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return sseResponse(source, headers);
}

/** Writes the loop's chat chunks in the client's stream format. */
export interface StreamSink {
  /** Whether the client gets the summed usage chunk (the chunk's `choices` are empty). */
  includeUsage: boolean;
  chunk(chunk: Record<string, any>): string;
  /** The stream failed after it began (an OpenAI-shaped error). */
  failure(error: Record<string, unknown>): string;
  /** The stream ended after its final chunks. */
  end(): string;
  /** The answer the stream spelled, for the request's log and store (chat: the summary and usage). */
  answer?(): unknown;
}

/** Chat completion chunks, as OpenAI streams them. */
export function chatSink(includeUsage: boolean): StreamSink {
  return {
    includeUsage,
    chunk: (chunk) => `data: ${JSON.stringify(chunk)}\n\n`,
    failure: (error) => `data: ${JSON.stringify({ error })}\n\n`,
    end: () => "data: [DONE]\n\n",
  };
}

/** The call being streamed, so a client that leaves cancels it (and the loop makes no further call). */
interface LiveStep {
  source?: SseSource;
  cancelled: boolean;
}

/** Held back from a call until it ends: its tool calls (by index) and its finish chunk. */
interface StepState {
  calls: Map<number, ChatToolCall>;
  content: string;
  finish?: Record<string, any>;
  failed: boolean;
}

async function* loopEvents(
  run: ToolLoopRun,
  first: ModelStep,
  firstBody: Record<string, any>,
  sink: StreamSink,
  live: LiveStep,
): AsyncGenerator<string, void> {
  let step = first;
  let body = firstBody;
  const meta: StreamMeta = { created: Math.floor(Date.now() / 1000), model: String(body.model) };
  for (;;) {
    const state: StepState = { calls: new Map(), content: "", failed: false };
    yield* relayStep(run, step, state, sink, live, meta);
    await step.outcome.done;
    run.count(step);
    if (live.cancelled) return;
    if (state.failed) {
      run.settle();
      return;
    }
    const calls = [...state.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    const { server, client } = splitToolCalls(calls, run.names);
    let stopped: StopReason | undefined;
    if (server.length > 0 && run.steps >= run.maxSteps) stopped = "max_tool_steps";
    else if (server.length > 0) {
      try {
        const { messages, records } = await runToolCalls(server, run.host, run.principal, {
          traceId: run.ctx.traceId,
          signal: run.ctx.signal,
        });
        run.toolCalls.push(...records);
        // A client that left while the tools ran gets no further model call.
        if (live.cancelled) return;
        if (client.length > 0) stopped = "client_tool_calls";
        else {
          body = run.followUp(body, { content: state.content || null, toolCalls: server }, messages);
          step = await run.callModel(body);
          if (step.response.status !== 200 || !isEventStream(step.response)) {
            // A later call refused (a guardrail): its answer as the stream's error event.
            const text = await step.response.text().catch(() => "");
            run.settle();
            yield sink.failure(errorPayload(text));
            return;
          }
          continue;
        }
      } catch (error) {
        // callModel settled the request with the failed call; a tool fault settles it here.
        run.settle(undefined, error);
        yield sink.failure(errorOf(error));
        return;
      }
    }
    // The end: the client's tool calls, the finish chunk, the summed usage, [DONE].
    const out = endOfStream(run, state, client, stopped, meta, sink);
    run.settle({ body: sink.answer?.() ?? { gateway_mcp: run.summary(stopped), usage: run.usage } });
    yield out;
    return;
  }
}

/** The created time and model the stream's chunks carry: the model calls' own, as the last one said them. */
interface StreamMeta {
  created: number;
  model: string;
}

/** One model call's stream relayed: its text passes on, its tool calls and finish chunk held back in `state`. */
async function* relayStep(
  run: ToolLoopRun,
  step: ModelStep,
  state: StepState,
  sink: StreamSink,
  live: LiveStep,
  meta: StreamMeta,
): AsyncGenerator<string, void> {
  const stepSource = sseSourceOf(step.response);
  live.source = stepSource;
  const decoder = new SseDecoder();
  for (;;) {
    const piece = await stepSource.next();
    if (piece === null) break;
    const bytes = typeof piece === "string" ? new TextEncoder().encode(piece) : piece;
    let out = "";
    for (const event of decoder.push(bytes)) {
      const chunk = parseChunk(event.data);
      if (!chunk) continue;
      if (chunk.error) {
        state.failed = true;
        out += sink.failure(chunk.error);
        continue;
      }
      if (typeof chunk.created === "number") meta.created = chunk.created;
      if (typeof chunk.model === "string") meta.model = chunk.model;
      const forwarded = absorb(chunk, state, run.requestId);
      if (forwarded) out += sink.chunk(forwarded);
    }
    if (out) yield out;
  }
}

/** The stream's last text: the client's tool calls, the finish chunk (with the loop's summary), usage, the end. */
function endOfStream(
  run: ToolLoopRun,
  state: StepState,
  client: ChatToolCall[],
  stopped: StopReason | undefined,
  meta: StreamMeta,
  sink: StreamSink,
): string {
  const base = { id: run.requestId, object: "chat.completion.chunk", created: meta.created, model: meta.model };
  let out = "";
  client.forEach((call, index) => {
    const delta = {
      tool_calls: [
        {
          index,
          id: call.id,
          type: "function",
          function: { name: call.function.name, arguments: call.function.arguments },
        },
      ],
    };
    out += sink.chunk({ ...base, choices: [{ index: 0, delta, finish_reason: null }] });
  });
  const finishReason =
    client.length > 0
      ? "tool_calls"
      : stopped === "max_tool_steps"
        ? "length"
        : (state.finish?.choices?.[0]?.finish_reason ?? "stop");
  const finishChunk = {
    ...base,
    ...(state.finish ?? {}),
    id: run.requestId,
    choices: [{ ...(state.finish?.choices?.[0] ?? { index: 0, delta: {} }), finish_reason: finishReason }],
    gateway_mcp: run.summary(stopped),
  };
  delete (finishChunk as { usage?: unknown }).usage;
  out += sink.chunk(finishChunk);
  const usage = run.usage;
  if (sink.includeUsage && usage) out += sink.chunk({ ...base, choices: [], usage });
  out += sink.end();
  return out;
}

/**
 * Takes one chunk of a call: text passes on (under the request's id), tool call deltas are gathered, the finish
 * chunk and usage-only chunks are held. Answers the chunk to forward, if any.
 */
function absorb(chunk: Record<string, any>, state: StepState, id: string): Record<string, any> | undefined {
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  if (choices.length === 0) return undefined;
  const choice = choices[0] ?? {};
  const delta = choice.delta ?? {};
  for (const part of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
    const index = typeof part.index === "number" ? part.index : state.calls.size;
    const call = state.calls.get(index) ?? { id: "", type: "function" as const, function: { name: "", arguments: "" } };
    if (part.id) call.id = part.id;
    if (part.function?.name) call.function.name += part.function.name;
    if (part.function?.arguments) call.function.arguments += part.function.arguments;
    state.calls.set(index, call);
  }
  if (typeof delta.content === "string") state.content += delta.content;
  if (choice.finish_reason) {
    const { tool_calls: _held, ...rest } = delta;
    state.finish = { ...chunk, choices: [{ ...choice, delta: rest }] };
    return undefined;
  }
  const { tool_calls: held, ...rest } = delta;
  if (held && Object.keys(rest).length === 0) return undefined;
  const { usage: _usage, ...forwarded } = chunk;
  return { ...forwarded, id, choices: [{ ...choice, delta: rest }] };
}

function parseChunk(data: string): Record<string, any> | undefined {
  if (data === "[DONE]") return undefined;
  try {
    const parsed: unknown = JSON.parse(data);
    return parsed && typeof parsed === "object" ? (parsed as Record<string, any>) : undefined;
  } catch {
    return undefined;
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get("content-type") ?? "").includes("text/event-stream");
}

function errorOf(error: unknown): Record<string, unknown> {
  const e = error as { message?: string; type?: string; param?: string | null; code?: string | null; status?: number };
  return {
    message: e?.message ?? String(error),
    type: e?.type ?? "server_error",
    param: e?.param ?? null,
    code: e?.code ?? null,
  };
}

function errorPayload(text: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (parsed?.error && typeof parsed.error === "object") return parsed.error as Record<string, unknown>;
  } catch {}
  return { message: text || "The model call was refused.", type: "server_error", param: null, code: null };
}
