import type { TransformContext } from "../../../providers/types.ts";
import { newResponseId } from "./ids.ts";
import type { ResponsesUsage } from "./usage.ts";

/**
 * The Response object (spec 2.1) of a translated answer, built in the shape of OpenAI's current Response object
 * (the `2026-07-30` schema of present.ts, which also derives the default schema from it). from-chat.ts, the
 * stream and the replay all build it here, so the JSON answer and the stream's final event agree field for field.
 */

type Json = Record<string, any>;

export type ResponseStatus = "completed" | "failed" | "in_progress" | "incomplete" | "queued" | "cancelled";

export interface ResponseOutcome {
  status: ResponseStatus;
  output: Json[];
  usage: ResponsesUsage | null;
  /** The answering model (the completion's `model`); the requested one until it is known. */
  model: string;
  incompleteReason?: "max_output_tokens" | "content_filter";
  error?: { code: string; message: string } | null;
  /** The tier the provider says it served the request with. */
  serviceTier?: string | null;
}

/** The Response echoing `body` (the validated request) with the outcome so far. */
export function buildResponse(body: Json, ctx: TransformContext, outcome: ResponseOutcome): Json {
  // In the order of OpenAI's answers: id, object, created_at, status, then the rest alphabetically, then usage,
  // user and metadata.
  return {
    id: newResponseId(ctx.requestId),
    object: "response",
    created_at: ctx.now,
    status: outcome.status,
    background: body.background ?? false,
    // OpenAI: "only present when the status is completed" (null otherwise); the answer is complete as it is built.
    completed_at: outcome.status === "completed" ? Math.max(ctx.now, Math.floor(Date.now() / 1000)) : null,
    error: outcome.error ?? null,
    frequency_penalty: body.frequency_penalty ?? 0,
    incomplete_details: outcome.incompleteReason ? { reason: outcome.incompleteReason } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    max_tool_calls: body.max_tool_calls ?? null,
    model: outcome.model,
    output: outcome.output,
    output_text: outputTextOf(outcome.output),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    presence_penalty: body.presence_penalty ?? 0,
    previous_response_id: body.previous_response_id ?? null,
    prompt_cache_key: body.prompt_cache_key ?? null,
    prompt_cache_retention: body.prompt_cache_retention ?? null,
    reasoning: {
      effort: body.reasoning?.effort ?? null,
      summary: body.reasoning?.summary ?? body.reasoning?.generate_summary ?? null,
    },
    safety_identifier: body.safety_identifier ?? null,
    service_tier: outcome.serviceTier ?? body.service_tier ?? "default",
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: { format: body.text?.format ?? { type: "text" }, verbosity: body.text?.verbosity ?? "medium" },
    tool_choice: body.tool_choice ?? "auto",
    tools: Array.isArray(body.tools) ? body.tools.map(echoedTool) : [],
    top_logprobs: body.top_logprobs ?? 0,
    top_p: body.top_p ?? 1,
    truncation: body.truncation ?? "disabled",
    usage: outcome.usage,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

/**
 * A request's tool as the Response echoes it: OpenAI's FunctionTool always carries `strict` (and `description`,
 * `parameters`), null when the request left them out; other tools as they came.
 */
function echoedTool(tool: Json): Json {
  if (tool?.type !== "function") return tool;
  return { description: null, parameters: null, ...tool, strict: tool.strict ?? null };
}

/** The `response.created` Response: nothing generated yet. */
export function startedResponse(body: Json, ctx: TransformContext): Json {
  return buildResponse(body, ctx, {
    status: "in_progress",
    output: [],
    usage: null,
    model: ctx.model || body.model,
    serviceTier: body.service_tier ?? "auto",
  });
}

/** The aggregate text of a Response: every `output_text` part of its message items, in order. */
export function outputTextOf(output: unknown): string {
  if (!Array.isArray(output)) return "";
  let text = "";
  for (const item of output) {
    if (item?.type !== "message" || !Array.isArray(item.content)) continue;
    for (const part of item.content)
      if (part?.type === "output_text" && typeof part.text === "string") text += part.text;
  }
  return text;
}

/** How a chat finish reason ends a Response. */
export function outcomeOfFinish(finishReason: unknown): Pick<ResponseOutcome, "status" | "incompleteReason"> {
  if (finishReason === "length") return { status: "incomplete", incompleteReason: "max_output_tokens" };
  if (finishReason === "content_filter") return { status: "incomplete", incompleteReason: "content_filter" };
  return { status: "completed" };
}

// Output items, built the same way from a JSON answer and from a stream.

export function outputTextPart(text: string, logprobs: Json[] = []): Json {
  return { type: "output_text", annotations: [], logprobs, text };
}

export function refusalPart(refusal: string): Json {
  return { type: "refusal", refusal };
}

export function messageItem(id: string, content: Json[], status: string): Json {
  return { id, type: "message", status, content, role: "assistant" };
}

export function functionCallItem(
  id: string,
  call: { callId: string; name: string; arguments: string },
  status: string,
): Json {
  return { id, type: "function_call", status, arguments: call.arguments, call_id: call.callId, name: call.name };
}

export function reasoningItem(id: string, summaryText: string): Json {
  return { id, type: "reasoning", summary: summaryText === "" ? [] : [summaryPart(summaryText)] };
}

export function summaryPart(text: string): Json {
  return { type: "summary_text", text };
}

/** Chat logprobs (`choice.logprobs.content`) -> the logprobs of an output_text part. */
export function logprobsFromChat(content: unknown): Json[] {
  if (!Array.isArray(content)) return [];
  return content.map((entry: Json) => ({
    token: entry?.token ?? "",
    bytes: Array.isArray(entry?.bytes) ? entry.bytes : [],
    logprob: entry?.logprob ?? 0,
    top_logprobs: Array.isArray(entry?.top_logprobs)
      ? entry.top_logprobs.map((top: Json) => ({
          token: top?.token ?? "",
          bytes: Array.isArray(top?.bytes) ? top.bytes : [],
          logprob: top?.logprob ?? 0,
        }))
      : [],
  }));
}
