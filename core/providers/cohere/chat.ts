import type { ChatUsage, FinishReason, TransformContext } from "../types.ts";
import { UpstreamError } from "../types.ts";

/**
 * OpenAI chat body -> Cohere Chat v2 body (POST /v2/chat).
 * Messages map almost 1:1: Cohere knows system/user/assistant/tool roles, text and image_url content parts,
 * assistant `tool_calls` in OpenAI's shape and tool results keyed by `tool_call_id`.
 */
export function toCohereChatRequest(body: Record<string, any>, ctx: Pick<TransformContext, "model" | "stream">) {
  const request: Record<string, unknown> = {
    model: body.model ?? ctx.model,
    messages: toCohereMessages(body.messages),
  };

  let tools: any[] | undefined = Array.isArray(body.tools)
    ? body.tools.filter((tool) => tool?.type === "function")
    : [];
  const choice = body.tool_choice;
  if (choice === "none") request.tool_choice = "NONE";
  else if (choice === "required") request.tool_choice = "REQUIRED";
  else if (choice && typeof choice === "object" && choice.function?.name) {
    // Cohere cannot name the tool to call: offer only that one and require a call.
    tools = tools.filter((tool) => tool.function?.name === choice.function.name);
    request.tool_choice = "REQUIRED";
  }
  if (tools.length > 0) {
    request.tools = tools.map((tool) => ({
      type: "function",
      function: {
        name: tool.function.name,
        ...(tool.function.description !== undefined && { description: tool.function.description }),
        parameters: tool.function.parameters ?? { type: "object", properties: {} },
      },
    }));
    if (tools.some((tool) => tool.function?.strict === true)) request.strict_tools = true;
  } else {
    delete request.tool_choice;
  }

  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens != null) request.max_tokens = maxTokens;
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.p = body.top_p;
  if (body.top_k != null) request.k = body.top_k;
  if (body.stop != null) request.stop_sequences = Array.isArray(body.stop) ? body.stop : [body.stop];
  if (body.seed != null) request.seed = body.seed;
  if (body.frequency_penalty != null) request.frequency_penalty = body.frequency_penalty;
  if (body.presence_penalty != null) request.presence_penalty = body.presence_penalty;
  if (body.logprobs === true) request.logprobs = true;

  const format = body.response_format;
  if (format?.type === "json_object") request.response_format = { type: "json_object" };
  else if (format?.type === "json_schema") {
    const schema = format.json_schema?.schema;
    request.response_format = schema ? { type: "json_object", json_schema: schema } : { type: "json_object" };
  }

  if (ctx.stream) request.stream = true;
  return request;
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return content == null ? "" : String(content);
  return content
    .map((part: any) => (typeof part === "string" ? part : part?.type === "text" ? (part.text ?? "") : ""))
    .join("");
}

function toCohereContent(content: unknown): unknown {
  if (!Array.isArray(content)) return typeof content === "string" ? content : textOf(content);
  const parts: unknown[] = [];
  for (const part of content as any[]) {
    if (typeof part === "string") parts.push({ type: "text", text: part });
    else if (part?.type === "text") parts.push({ type: "text", text: part.text ?? "" });
    else if (part?.type === "image_url") {
      const image = typeof part.image_url === "string" ? { url: part.image_url } : part.image_url;
      parts.push({ type: "image_url", image_url: image });
    } else {
      throw new UpstreamError(400, `cohere does not accept ${part?.type ?? "unknown"} content parts`, {
        param: "messages",
        code: "unsupported_content",
      });
    }
  }
  return parts;
}

function toCohereMessages(messages: unknown): unknown[] {
  if (!Array.isArray(messages)) return [];
  return messages.map((message: any) => {
    switch (message?.role) {
      case "system":
      case "developer":
        return { role: "system", content: textOf(message.content) };
      case "user":
        return { role: "user", content: toCohereContent(message.content) };
      case "assistant": {
        const out: Record<string, unknown> = { role: "assistant" };
        const text = textOf(message.content);
        if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
          out.tool_calls = message.tool_calls.map((call: any) => ({
            id: call.id,
            type: "function",
            function: { name: call.function?.name, arguments: call.function?.arguments ?? "{}" },
          }));
          // Cohere keeps the model's reasoning about the calls as `tool_plan`; text alongside calls is that plan.
          if (text) out.tool_plan = text;
        } else {
          out.content = text;
        }
        return out;
      }
      case "tool":
        return { role: "tool", tool_call_id: message.tool_call_id, content: textOf(message.content) };
      default:
        throw new UpstreamError(400, `cohere does not accept messages with role ${message?.role}`, {
          param: "messages",
        });
    }
  });
}

export function mapCohereFinishReason(reason: string | null | undefined): FinishReason | null {
  switch (reason) {
    case "COMPLETE":
    case "STOP_SEQUENCE":
      return "stop";
    case "MAX_TOKENS":
      return "length";
    case "TOOL_CALL":
      return "tool_calls";
    case undefined:
    case null:
      return null;
    default:
      return "stop";
  }
}

/** Cohere ends a failed generation with finish_reason ERROR (or TIMEOUT): an error, not an answer. */
export function cohereFinishError(reason: string | null | undefined, message?: string): UpstreamError | undefined {
  if (reason === "ERROR") return new UpstreamError(502, message || "cohere stopped the generation with an error");
  if (reason === "TIMEOUT") return new UpstreamError(504, message || "cohere timed out while generating");
  return undefined;
}

/** Cohere usage: `tokens` counts what the model saw, `billed_units` what is billed; the former wins. */
export function toChatUsage(usage: any): ChatUsage {
  const prompt = Number(usage?.tokens?.input_tokens ?? usage?.billed_units?.input_tokens ?? 0);
  const completion = Number(usage?.tokens?.output_tokens ?? usage?.billed_units?.output_tokens ?? 0);
  const result: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (typeof usage?.cached_tokens === "number" && usage.cached_tokens > 0) {
    result.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  }
  return result;
}

/** Cohere Chat v2 response -> OpenAI chat.completion. */
export function fromCohereChatResponse(
  upstream: any,
  ctx: Pick<TransformContext, "now" | "model" | "requestId">,
): object {
  const failure = cohereFinishError(upstream?.finish_reason);
  if (failure) throw failure;
  const message = upstream?.message ?? {};
  const parts: any[] = Array.isArray(message.content) ? message.content : [];
  const text = parts
    .filter((part) => part?.type === "text")
    .map((part) => part.text ?? "")
    .join("");
  const thinking = parts
    .filter((part) => part?.type === "thinking")
    .map((part) => part.thinking ?? "")
    .join("");
  const toolCalls = Array.isArray(message.tool_calls)
    ? message.tool_calls.map((call: any) => ({
        id: call.id,
        type: "function",
        function: { name: call.function?.name, arguments: call.function?.arguments ?? "{}" },
      }))
    : [];

  const assistant: Record<string, unknown> = {
    role: "assistant",
    content: text || (toolCalls.length > 0 ? (message.tool_plan ?? null) : text),
    refusal: null,
  };
  if (thinking) assistant.reasoning_content = thinking;
  if (toolCalls.length > 0) assistant.tool_calls = toolCalls;
  if (Array.isArray(message.citations) && message.citations.length > 0) assistant.citations = message.citations;

  const finish = mapCohereFinishReason(upstream?.finish_reason) ?? (toolCalls.length > 0 ? "tool_calls" : "stop");
  return {
    id: upstream?.id ?? ctx.requestId,
    object: "chat.completion",
    created: ctx.now,
    model: ctx.model,
    choices: [{ index: 0, message: assistant, logprobs: null, finish_reason: finish }],
    usage: toChatUsage(upstream?.usage),
  };
}
