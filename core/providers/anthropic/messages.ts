import type { ChatUsage, FinishReason, TransformContext } from "../types.ts";
import { UpstreamError } from "../types.ts";
import { anthropicUpstreamError, isAnthropicError } from "./errors.ts";

/**
 * OpenAI chat completions <-> Anthropic Messages API (https://docs.anthropic.com/en/api/messages).
 * Pure functions, shared by every adapter that speaks the Messages format (Anthropic, Vertex AI, Bedrock invoke).
 */

export const ANTHROPIC_VERSION = "2023-06-01";
export const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicRequestOptions {
  /** Model id written to the body; leave undefined when the model is part of the URL (Vertex AI). */
  model?: string;
  stream?: boolean;
  /** Body field `anthropic_version`, used by Vertex AI and Bedrock instead of the header. */
  anthropicVersion?: string;
  /** `max_tokens` when the client gave none (raised above the thinking budget when needed). */
  defaultMaxTokens?: number;
}

type Block = Record<string, any>;
interface AnthropicMessage {
  role: "user" | "assistant";
  content: Block[];
}

/** Builds the Messages API body from an OpenAI chat completion body. Throws UpstreamError(400) for what Anthropic cannot do. */
export function toAnthropicMessagesRequest(
  body: Record<string, any>,
  options: AnthropicRequestOptions = {},
): Record<string, any> {
  if (typeof body.n === "number" && body.n > 1) {
    throw new UpstreamError(400, "n > 1 is not supported by anthropic", { param: "n", code: "unsupported_parameter" });
  }
  const out: Record<string, any> = {};
  if (options.model !== undefined) out.model = options.model;
  if (options.anthropicVersion) out.anthropic_version = options.anthropicVersion;

  const { system, messages } = convertMessages(Array.isArray(body.messages) ? body.messages : []);
  if (system !== undefined) out.system = system;
  out.messages = messages;

  const thinking = body.thinking;
  const budget =
    thinking?.type === "enabled" && typeof thinking.budget_tokens === "number" ? thinking.budget_tokens : 0;
  const defaultMax = options.defaultMaxTokens ?? DEFAULT_MAX_TOKENS;
  out.max_tokens = body.max_completion_tokens ?? body.max_tokens ?? (budget > 0 ? budget + defaultMax : defaultMax);
  if (thinking && typeof thinking === "object") out.thinking = thinking;

  // Anthropic's range is 0..1 (OpenAI's is 0..2): clamp rather than have the request rejected.
  if (typeof body.temperature === "number") out.temperature = Math.min(Math.max(body.temperature, 0), 1);
  if (typeof body.top_p === "number") out.top_p = body.top_p;
  if (typeof body.top_k === "number") out.top_k = body.top_k;
  if (body.stop != null) {
    const stops = (Array.isArray(body.stop) ? body.stop : [body.stop]).filter(
      (s: unknown) => typeof s === "string" && s,
    );
    if (stops.length) out.stop_sequences = stops;
  }
  if (typeof body.user === "string" && body.user) out.metadata = { user_id: body.user };

  const tools = convertTools(body);
  if (tools.length) {
    out.tools = tools;
    const choice = convertToolChoice(body.tool_choice ?? body.function_call, body.parallel_tool_calls);
    if (choice) out.tool_choice = choice;
  }

  // Structured outputs: Anthropic's documented way is `output_config.format` (constrained decoding against a
  // JSON schema), not a forced tool or a prompt instruction. `json_object` has no schema and no equivalent: dropped.
  const format = body.response_format;
  if (format?.type === "json_schema" && format.json_schema?.schema) {
    out.output_config = { format: { type: "json_schema", schema: format.json_schema.schema } };
  }

  if (options.stream) out.stream = true;
  return out;
}

function convertMessages(input: any[]): {
  system: string | Block[] | undefined;
  messages: Array<{ role: "user" | "assistant"; content: string | Block[] }>;
} {
  const systemBlocks: Block[] = [];
  const messages: AnthropicMessage[] = [];
  // Deprecated `function_call`s carry no id: give each one an id and hand it to the next `function` result of that name.
  const pendingFunctionIds = new Map<string, string[]>();
  let functionCallCount = 0;

  const push = (role: "user" | "assistant", content: Block[]) => {
    if (!content.length) return;
    const last = messages[messages.length - 1];
    // Anthropic requires user/assistant alternation: consecutive same-role messages become one.
    if (last && last.role === role) last.content.push(...content);
    else messages.push({ role, content: [...content] });
  };

  for (const message of input) {
    switch (message?.role) {
      case "system":
      case "developer":
        systemBlocks.push(...contentToBlocks(message.content).filter((block) => block.type === "text"));
        break;
      case "user":
        push("user", contentToBlocks(message.content));
        break;
      case "assistant": {
        const blocks: Block[] = [];
        // Thinking blocks returned to the client in `content_blocks` must go back first, signature intact.
        if (Array.isArray(message.content_blocks)) {
          for (const block of message.content_blocks) {
            if (block?.type === "thinking" || block?.type === "redacted_thinking") blocks.push(block);
          }
        }
        blocks.push(...contentToBlocks(message.content));
        for (const call of message.tool_calls ?? []) {
          if (call?.function?.name) blocks.push(toolUse(call.id, call.function.name, call.function.arguments));
        }
        if (message.function_call?.name) {
          const id = `call_fn_${++functionCallCount}`;
          const queue = pendingFunctionIds.get(message.function_call.name) ?? [];
          queue.push(id);
          pendingFunctionIds.set(message.function_call.name, queue);
          blocks.push(toolUse(id, message.function_call.name, message.function_call.arguments));
        }
        push("assistant", blocks);
        break;
      }
      case "tool":
        push("user", [toolResult(message.tool_call_id, message.content)]);
        break;
      case "function": {
        const id = pendingFunctionIds.get(message.name)?.shift() ?? `call_fn_${++functionCallCount}`;
        push("user", [toolResult(id, message.content)]);
        break;
      }
      default:
        break;
    }
  }

  for (const message of messages) {
    // Anthropic rejects empty text blocks; a message left with no block is dropped.
    message.content = message.content.filter((block) => !(block.type === "text" && block.text === ""));
  }
  return { system: systemOf(systemBlocks), messages: messages.filter((m) => m.content.length).map(collapse) };
}

/** One plain text block becomes a string (the shortest form Anthropic accepts). */
function collapse(message: AnthropicMessage): { role: "user" | "assistant"; content: string | Block[] } {
  const [only] = message.content;
  if (message.content.length === 1 && only.type === "text" && Object.keys(only).length === 2) {
    return { role: message.role, content: only.text };
  }
  return message;
}

function systemOf(blocks: Block[]): string | Block[] | undefined {
  const nonEmpty = blocks.filter((block) => block.text !== "");
  if (!nonEmpty.length) return undefined;
  if (nonEmpty.every((block) => Object.keys(block).length === 2))
    return nonEmpty.map((block) => block.text).join("\n\n");
  return nonEmpty;
}

/** OpenAI message content (string or parts) -> Anthropic content blocks. */
export function contentToBlocks(content: unknown): Block[] {
  if (content == null) return [];
  if (typeof content === "string") return [{ type: "text", text: content }];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const part of content) {
    if (typeof part === "string") {
      blocks.push({ type: "text", text: part });
      continue;
    }
    if (!part || typeof part !== "object") continue;
    switch (part.type) {
      case "text":
      case "input_text":
        blocks.push(withCacheControl({ type: "text", text: String(part.text ?? "") }, part));
        break;
      case "image_url": {
        const url = typeof part.image_url === "string" ? part.image_url : part.image_url?.url;
        if (typeof url === "string") blocks.push(withCacheControl({ type: "image", source: imageSource(url) }, part));
        break;
      }
      case "file": {
        const data = part.file?.file_data;
        if (typeof data === "string" && data.startsWith("data:")) {
          blocks.push(withCacheControl({ type: "document", source: dataUrlSource(data) }, part));
        } else {
          throw new UpstreamError(400, "file parts must carry file_data (a data: URL) for anthropic", {
            param: "messages",
          });
        }
        break;
      }
      case "input_audio":
        throw new UpstreamError(400, "audio input is not supported by anthropic", { param: "messages" });
      default:
        // Anthropic's own blocks (image, document, thinking, search_result...) pass as they are.
        blocks.push(part);
        break;
    }
  }
  return blocks;
}

function withCacheControl(block: Block, part: Record<string, any>): Block {
  if (part.cache_control) block.cache_control = part.cache_control;
  return block;
}

function imageSource(url: string): Block {
  if (url.startsWith("data:")) return dataUrlSource(url);
  return { type: "url", url };
}

/** `data:<media type>[;base64],<data>` -> base64 source. */
function dataUrlSource(url: string): Block {
  const comma = url.indexOf(",");
  const header = url.slice(5, comma < 0 ? undefined : comma);
  const payload = comma < 0 ? "" : url.slice(comma + 1);
  const [mediaType, ...params] = header.split(";");
  const isBase64 = params.includes("base64");
  const data = isBase64 ? payload : Buffer.from(decodeURIComponent(payload), "utf8").toString("base64");
  return { type: "base64", media_type: mediaType || "application/octet-stream", data };
}

function toolUse(id: unknown, name: string, args: unknown): Block {
  return { type: "tool_use", id: String(id ?? ""), name, input: parseToolInput(args) };
}

/** Tool call arguments (a JSON string, or already an object) as a tool_use `input`: `{}` unless a JSON object. */
export function parseToolInput(args: unknown): Record<string, unknown> {
  if (args && typeof args === "object" && !Array.isArray(args)) return args as Record<string, unknown>;
  if (typeof args !== "string" || !args.trim()) return {};
  try {
    const parsed = JSON.parse(args);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : {};
  } catch {
    return {};
  }
}

function toolResult(toolCallId: unknown, content: unknown): Block {
  const block: Block = { type: "tool_result", tool_use_id: String(toolCallId ?? "") };
  if (typeof content === "string") block.content = content;
  else {
    const blocks = contentToBlocks(content).filter((b) => !(b.type === "text" && b.text === ""));
    if (blocks.length) block.content = blocks;
  }
  return block;
}

function convertTools(body: Record<string, any>): Block[] {
  const tools: Block[] = [];
  for (const tool of body.tools ?? []) {
    if (tool?.type === "function" && tool.function) tools.push(functionTool(tool.function, tool));
    // Anthropic server tools (`web_search_...`, `bash_...`) given in their own shape are forwarded.
    else if (tool && typeof tool === "object" && tool.type !== "function") tools.push(tool);
  }
  if (!body.tools) for (const fn of body.functions ?? []) tools.push(functionTool(fn, fn));
  return tools;
}

function functionTool(fn: Record<string, any>, holder: Record<string, any>): Block {
  const tool: Block = { name: fn.name };
  if (fn.description) tool.description = fn.description;
  tool.input_schema =
    fn.parameters && typeof fn.parameters === "object" ? fn.parameters : { type: "object", properties: {} };
  if (!tool.input_schema.type) tool.input_schema = { type: "object", ...tool.input_schema };
  return withCacheControl(tool, holder);
}

function convertToolChoice(choice: unknown, parallel: unknown): Block | undefined {
  let result: Block | undefined;
  if (choice === "none") return { type: "none" };
  if (choice === "auto") result = { type: "auto" };
  else if (choice === "required" || choice === "any") result = { type: "any" };
  else if (choice && typeof choice === "object") {
    const c = choice as Record<string, any>;
    const name = c.function?.name ?? c.name;
    if (typeof name === "string") result = { type: "tool", name };
  }
  if (parallel === false) result = { ...(result ?? { type: "auto" }), disable_parallel_tool_use: true };
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// Response

const FINISH_REASONS: Record<string, FinishReason> = {
  end_turn: "stop",
  stop_sequence: "stop",
  pause_turn: "stop",
  max_tokens: "length",
  model_context_window_exceeded: "length",
  tool_use: "tool_calls",
  refusal: "content_filter",
};

export function mapStopReason(reason: string | null | undefined): FinishReason | null {
  if (reason == null) return null;
  return FINISH_REASONS[reason] ?? "stop";
}

/** Anthropic usage -> OpenAI usage: prompt tokens include cache reads and cache writes. */
export function toChatUsage(usage: Record<string, any> | undefined): ChatUsage {
  const input = num(usage?.input_tokens);
  const cacheRead = num(usage?.cache_read_input_tokens);
  const cacheCreation = num(usage?.cache_creation_input_tokens);
  const prompt = input + cacheRead + cacheCreation;
  const completion = num(usage?.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_creation_tokens: cacheCreation },
  };
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** Messages API `message` object -> OpenAI `chat.completion`. Throws UpstreamError for an error body. */
export function fromAnthropicMessage(
  upstream: any,
  ctx: Pick<TransformContext, "now" | "model" | "requestId">,
): object {
  if (isAnthropicError(upstream)) throw anthropicUpstreamError(upstream);
  if (!upstream || typeof upstream !== "object" || !Array.isArray(upstream.content)) {
    throw new UpstreamError(502, "anthropic returned an unexpected response body", { type: "server_error" });
  }
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: object[] = [];
  const contentBlocks: object[] = [];
  let hasThinking = false;
  for (const block of upstream.content) {
    if (block?.type === "text") {
      texts.push(block.text ?? "");
      contentBlocks.push({ type: "text", text: block.text ?? "" });
    } else if (block?.type === "thinking") {
      hasThinking = true;
      thinking.push(block.thinking ?? "");
      contentBlocks.push({ type: "thinking", thinking: block.thinking ?? "", signature: block.signature });
    } else if (block?.type === "redacted_thinking") {
      hasThinking = true;
      contentBlocks.push({ type: "redacted_thinking", data: block.data });
    } else if (block?.type === "tool_use") {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const message: Record<string, unknown> = { role: "assistant", content: texts.length ? texts.join("") : null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  if (thinking.length) message.reasoning_content = thinking.join("\n\n");
  // With thinking, the ordered blocks (signatures included) let a client send the turn back as Anthropic needs it.
  if (hasThinking) message.content_blocks = contentBlocks;
  return {
    id: upstream.id ?? ctx.requestId,
    object: "chat.completion",
    created: ctx.now,
    model: upstream.model ?? ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(upstream.stop_reason) ?? "stop" }],
    usage: toChatUsage(upstream.usage),
  };
}
