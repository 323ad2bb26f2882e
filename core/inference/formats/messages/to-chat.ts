import { badRequest } from "../../../http/errors.ts";

/**
 * Anthropic Messages request -> OpenAI chat completions request, for providers reached through their chat
 * adapter. What chat has no room for is dropped when it only tunes the answer (top_k, cache_control, thinking
 * signatures, service_tier) and refused with a 400 when it changes what the model is asked (server tools,
 * Anthropic file ids, documents by URL).
 */

type Json = Record<string, any>;
type Path = Array<string | number>;

export function messagesToChat(body: Json): Json {
  const chat: Json = { model: body.model, messages: chatMessages(body) };
  if (typeof body.max_tokens === "number") chat.max_tokens = body.max_tokens;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length) chat.stop = [...body.stop_sequences];
  if (typeof body.temperature === "number") chat.temperature = body.temperature;
  if (typeof body.top_p === "number") chat.top_p = body.top_p;
  if (typeof body.metadata?.user_id === "string" && body.metadata.user_id) chat.user = body.metadata.user_id;

  const effort = reasoningEffort(body);
  if (effort) chat.reasoning_effort = effort;

  const format = body.output_config?.format;
  if (format?.type === "json_schema" && format.schema && typeof format.schema === "object") {
    chat.response_format = {
      type: "json_schema",
      json_schema: { name: "output", schema: format.schema, strict: true },
    };
  }

  if (Array.isArray(body.tools) && body.tools.length) {
    chat.tools = body.tools.map(chatTool);
    Object.assign(chat, chatToolChoice(body.tool_choice));
  }

  if (body.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

/**
 * Thinking -> `reasoning_effort`: a budget is bucketed (<= 2048 low, <= 8192 medium, else high); adaptive
 * thinking takes `output_config.effort` (Anthropic's `max` and `xhigh` are chat's `high`) or leaves the
 * provider's default.
 */
export function reasoningEffort(body: Json): "low" | "medium" | "high" | undefined {
  const thinking = body.thinking;
  if (thinking?.type === "enabled") {
    const budget = typeof thinking.budget_tokens === "number" ? thinking.budget_tokens : 0;
    return budget <= 2048 ? "low" : budget <= 8192 ? "medium" : "high";
  }
  if (thinking?.type === "adaptive") {
    const effort = body.output_config?.effort;
    if (effort === "low" || effort === "medium") return effort;
    if (effort === "high" || effort === "max" || effort === "xhigh") return "high";
  }
  return undefined;
}

function chatMessages(body: Json): Json[] {
  const messages: Json[] = [];
  const system = systemText(body.system);
  if (system) messages.push({ role: "system", content: system });
  const input: Json[] = Array.isArray(body.messages) ? body.messages : [];
  input.forEach((message, i) => {
    const path: Path = ["messages", i, "content"];
    if (message.role === "assistant") {
      const assistant = assistantMessage(message.content, path);
      if (assistant) messages.push(assistant);
    } else messages.push(...userMessages(message.content, path));
  });
  return messages;
}

/** System text blocks joined as Anthropic reads them (one after the other); cache_control is dropped. */
export function systemText(system: unknown): string {
  if (typeof system === "string") return system;
  if (!Array.isArray(system)) return "";
  return system
    .filter((block) => block?.type === "text" && typeof block.text === "string" && block.text)
    .map((block) => block.text)
    .join("\n\n");
}

/**
 * A user turn: its tool results first (chat wants each `tool` message right after the assistant's tool calls),
 * then the rest of its content as one user message. Images and documents inside a tool result cannot sit in a
 * `tool` message: they follow in the user message so the model still sees them.
 */
function userMessages(content: unknown, path: Path): Json[] {
  if (typeof content === "string") return [{ role: "user", content }];
  const blocks: Json[] = Array.isArray(content) ? content : [];
  const out: Json[] = [];
  const parts: Json[] = [];
  blocks.forEach((block, j) => {
    const at = [...path, j];
    if (block?.type === "tool_result") {
      const { text, media } = toolResultContent(block.content, [...at, "content"]);
      out.push({ role: "tool", tool_call_id: block.tool_use_id, content: text });
      parts.push(...media);
    } else if (block?.type === "thinking" || block?.type === "redacted_thinking") {
      // Chat cannot carry thinking (nor its signature): dropped.
    } else parts.push(...userParts(block, at));
  });
  if (parts.length) out.push({ role: "user", content: partsContent(parts) });
  return out;
}

/** Only text: one string (every chat provider takes it); with images or files: the parts. */
function partsContent(parts: Json[]): string | Json[] {
  return parts.every((part) => part.type === "text") ? parts.map((part) => part.text).join("\n") : parts;
}

function userParts(block: Json, at: Path): Json[] {
  switch (block?.type) {
    case "text":
      return [{ type: "text", text: String(block.text ?? "") }];
    case "image":
      return [{ type: "image_url", image_url: { url: imageUrl(block.source, [...at, "source"]) } }];
    case "document":
      return documentParts(block, at);
    default:
      throw unsupported(`content blocks of type '${block?.type}' cannot be sent to this provider`, at);
  }
}

function imageUrl(source: Json, at: Path): string {
  if (source?.type === "base64") return `data:${source.media_type};base64,${source.data}`;
  if (source?.type === "url") return source.url;
  throw unsupported(`image sources of type '${source?.type}' cannot be sent to this provider`, at);
}

/** Documents: base64 (PDF) -> a chat file part; plain text and content sources -> their text (and images). */
function documentParts(block: Json, at: Path): Json[] {
  const source = block.source ?? {};
  switch (source.type) {
    case "base64": {
      const file: Json = { file_data: `data:${source.media_type};base64,${source.data}` };
      file.filename = typeof block.title === "string" && block.title ? block.title : "document";
      return [{ type: "file", file }];
    }
    case "text":
      return [{ type: "text", text: String(source.data ?? "") }];
    case "content": {
      if (typeof source.content === "string") return [{ type: "text", text: source.content }];
      const blocks: Json[] = Array.isArray(source.content) ? source.content : [];
      return blocks.flatMap((inner, k) => userParts(inner, [...at, "source", "content", k]));
    }
    default:
      throw unsupported(`document sources of type '${source.type}' cannot be sent to this provider`, [...at, "source"]);
  }
}

/** A tool result's text (blocks joined) and the media parts it carries. */
function toolResultContent(content: unknown, at: Path): { text: string; media: Json[] } {
  if (content == null) return { text: "", media: [] };
  if (typeof content === "string") return { text: content, media: [] };
  const texts: string[] = [];
  const media: Json[] = [];
  (Array.isArray(content) ? content : []).forEach((block: Json, k) => {
    for (const part of userParts(block, [...at, k])) {
      if (part.type === "text") texts.push(part.text);
      else media.push(part);
    }
  });
  return { text: texts.join("\n"), media };
}

/** An assistant turn: text -> content, tool_use -> tool_calls; thinking is dropped. Empty turns are left out. */
function assistantMessage(content: unknown, path: Path): Json | undefined {
  if (typeof content === "string") return { role: "assistant", content };
  const texts: string[] = [];
  const toolCalls: Json[] = [];
  (Array.isArray(content) ? content : []).forEach((block: Json, j) => {
    switch (block?.type) {
      case "text":
        texts.push(String(block.text ?? ""));
        break;
      case "tool_use":
        toolCalls.push({
          id: block.id,
          type: "function",
          function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
        });
        break;
      case "thinking":
      case "redacted_thinking":
        break;
      default:
        throw unsupported(`assistant content blocks of type '${block?.type}' cannot be sent to this provider`, [
          ...path,
          j,
        ]);
    }
  });
  if (!texts.length && !toolCalls.length) return undefined;
  const message: Json = { role: "assistant", content: texts.length ? texts.join("") : null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return message;
}

function chatTool(tool: Json): Json {
  if (tool.type != null && tool.type !== "custom") {
    throw badRequest(
      `Server tool '${tool.name}' (${tool.type}) runs only on Anthropic; this provider takes custom tools only.`,
      "tools",
      "unsupported_parameter",
    );
  }
  const fn: Json = { name: tool.name };
  if (tool.description) fn.description = tool.description;
  fn.parameters = tool.input_schema ?? { type: "object", properties: {} };
  return { type: "function", function: fn };
}

function chatToolChoice(choice: Json | undefined): Json {
  if (!choice) return {};
  const out: Json = {};
  if (choice.type === "auto") out.tool_choice = "auto";
  else if (choice.type === "any") out.tool_choice = "required";
  else if (choice.type === "none") out.tool_choice = "none";
  else if (choice.type === "tool") out.tool_choice = { type: "function", function: { name: choice.name } };
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}

function unsupported(message: string, at: Path) {
  return badRequest(message, paramOf(at), "unsupported_parameter");
}

/** `["messages", 0, "content", 1]` -> `messages[0].content[1]` (the param style of core/http/json.ts). */
function paramOf(path: Path): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}
