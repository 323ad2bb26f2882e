import { type ChatUsage, type FinishReason, type TransformContext, UpstreamError } from "../types.ts";

/**
 * OpenAI chat completions <-> Bedrock Converse (POST /model/{modelId}/converse and /converse-stream).
 * Pure functions; the route adapter in index.ts adds URL and authentication.
 */

type Block = Record<string, any>;
interface ConverseMessage {
  role: "user" | "assistant";
  content: Block[];
}

const IMAGE_FORMATS: Record<string, string> = {
  "image/png": "png",
  "image/jpeg": "jpeg",
  "image/jpg": "jpeg",
  "image/gif": "gif",
  "image/webp": "webp",
};

const DOCUMENT_FORMATS: Record<string, string> = {
  "application/pdf": "pdf",
  "text/csv": "csv",
  "application/msword": "doc",
  "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
  "application/vnd.ms-excel": "xls",
  "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
  "text/html": "html",
  "text/plain": "txt",
  "text/markdown": "md",
};

export function toConverseRequest(body: Record<string, any>, ctx: TransformContext): Record<string, any> {
  if (typeof body.n === "number" && body.n > 1) {
    throw new UpstreamError(400, "Bedrock Converse returns one choice per request: n > 1 is not supported", {
      param: "n",
    });
  }
  const modelId = ctx.model || body.model || "";
  const { system, messages } = convertMessages(body.messages);
  const out: Record<string, any> = { messages };
  if (system.length > 0) out.system = system;

  const inference: Record<string, any> = {};
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === "number") inference.maxTokens = maxTokens;
  if (typeof body.temperature === "number") inference.temperature = body.temperature;
  if (typeof body.top_p === "number") inference.topP = body.top_p;
  const stop = typeof body.stop === "string" ? [body.stop] : Array.isArray(body.stop) ? body.stop : [];
  if (stop.length > 0) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;

  const toolConfig = convertTools(body, messages);
  if (toolConfig) out.toolConfig = toolConfig;

  // Model-specific parameters. Other OpenAI fields without a Converse equivalent (seed, penalties, logprobs,
  // parallel_tool_calls...) are dropped rather than forwarded, as Bedrock rejects fields a model does not know.
  // A client may also send Bedrock's own additionalModelRequestFields, which is merged.
  const extra: Record<string, any> = {
    ...(isObject(body.additionalModelRequestFields) ? body.additionalModelRequestFields : {}),
  };
  if (isObject(body.thinking)) {
    // Anthropic extended thinking: {type: "enabled", budget_tokens} goes to the model as it is.
    const thinking: Record<string, any> = { type: body.thinking.type ?? "enabled" };
    if (body.thinking.budget_tokens !== undefined) thinking.budget_tokens = body.thinking.budget_tokens;
    extra.thinking = thinking;
  }
  if (typeof body.top_k === "number") {
    // Model specific: Amazon Nova reads it from its own inferenceConfig, Anthropic and others from top_k.
    if (/amazon\.nova/.test(modelId)) extra.inferenceConfig = { ...extra.inferenceConfig, topK: body.top_k };
    else extra.top_k = body.top_k;
  }
  if (Object.keys(extra).length > 0) out.additionalModelRequestFields = extra;

  const format = body.response_format;
  if (format?.type === "json_schema" && isObject(format.json_schema?.schema)) {
    const jsonSchema: Record<string, any> = { schema: JSON.stringify(format.json_schema.schema) };
    if (format.json_schema.name) jsonSchema.name = format.json_schema.name;
    if (format.json_schema.description) jsonSchema.description = format.json_schema.description;
    out.outputConfig = { textFormat: { type: "json_schema", structure: { jsonSchema } } };
  }

  // Bedrock-native fields a client may send through the gateway as they are.
  for (const key of ["additionalModelResponseFieldPaths", "guardrailConfig", "performanceConfig", "requestMetadata"]) {
    if (body[key] !== undefined) out[key] = body[key];
  }
  return out;
}

function convertMessages(input: unknown): { system: Block[]; messages: ConverseMessage[] } {
  if (!Array.isArray(input)) throw new UpstreamError(400, "messages must be an array", { param: "messages" });
  const system: Block[] = [];
  const messages: ConverseMessage[] = [];
  const append = (role: ConverseMessage["role"], content: Block[]) => {
    if (content.length === 0) return;
    const last = messages[messages.length - 1];
    // Converse wants alternating roles: consecutive same-role messages (e.g. several tool results) merge.
    if (last && last.role === role) last.content.push(...content);
    else messages.push({ role, content });
  };

  input.forEach((message: any, i: number) => {
    const param = `messages[${i}]`;
    switch (message?.role) {
      case "system":
      case "developer":
        system.push(...textBlocks(message.content, param));
        break;
      case "user":
        append("user", contentBlocks(message.content, param));
        break;
      case "assistant": {
        const blocks = message.content == null ? [] : contentBlocks(message.content, param);
        for (const [j, call] of (Array.isArray(message.tool_calls) ? message.tool_calls : []).entries()) {
          blocks.push({
            toolUse: {
              toolUseId: call.id,
              name: call.function?.name,
              input: parseArguments(call.function?.arguments, `${param}.tool_calls[${j}].function.arguments`),
            },
          });
        }
        append("assistant", blocks);
        break;
      }
      case "tool":
        append("user", [
          { toolResult: { toolUseId: message.tool_call_id, content: toolResultContent(message.content, param) } },
        ]);
        break;
      default:
        throw new UpstreamError(400, `Bedrock does not support messages with role ${JSON.stringify(message?.role)}`, {
          param: `${param}.role`,
        });
    }
  });
  return { system, messages };
}

/** System prompt parts: text only (plus cache points). */
function textBlocks(content: unknown, param: string): Block[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  content.forEach((part: any, j: number) => {
    if (part?.type !== "text") {
      throw new UpstreamError(400, "system messages accept only text parts", { param: `${param}.content[${j}]` });
    }
    if (part.text) blocks.push({ text: part.text });
    if (part.cache_control) blocks.push({ cachePoint: { type: "default" } });
  });
  return blocks;
}

function contentBlocks(content: unknown, param: string): Block[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  content.forEach((part: any, j: number) => {
    const partParam = `${param}.content[${j}]`;
    switch (part?.type) {
      case "text":
        if (part.text) blocks.push({ text: part.text });
        break;
      case "refusal":
        if (part.refusal) blocks.push({ text: part.refusal });
        break;
      case "image_url":
        blocks.push(imageBlock(part.image_url?.url ?? part.image_url, `${partParam}.image_url.url`));
        break;
      case "file":
        blocks.push(documentBlock(part.file ?? {}, `${partParam}.file`));
        break;
      default:
        throw new UpstreamError(
          400,
          `Bedrock Converse does not support content parts of type ${JSON.stringify(part?.type)}`,
          {
            param: `${partParam}.type`,
          },
        );
    }
    // Anthropic-style cache_control on a part becomes a Converse cache point right after it.
    if (part.cache_control) blocks.push({ cachePoint: { type: "default" } });
  });
  return blocks;
}

interface DataUrl {
  mediaType: string;
  base64: string;
}

function parseDataUrl(url: unknown): DataUrl | undefined {
  if (typeof url !== "string") return undefined;
  const match = /^data:([^;,]*)((?:;[^;,]*)*),(.*)$/s.exec(url);
  if (!match) return undefined;
  const isBase64 = match[2].split(";").includes("base64");
  const base64 = isBase64 ? match[3] : Buffer.from(decodeURIComponent(match[3]), "utf8").toString("base64");
  return { mediaType: match[1].toLowerCase(), base64 };
}

function imageBlock(url: unknown, param: string): Block {
  const data = parseDataUrl(url);
  if (!data) {
    throw new UpstreamError(
      400,
      "Bedrock Converse accepts images only as base64 data URLs (data:image/png;base64,...), not http(s) URLs",
      { param, code: "unsupported_image_url" },
    );
  }
  const format = IMAGE_FORMATS[data.mediaType];
  if (!format) {
    throw new UpstreamError(400, `Unsupported image type ${data.mediaType || "(none)"}: use png, jpeg, gif or webp`, {
      param,
    });
  }
  return { image: { format, source: { bytes: data.base64 } } };
}

function documentBlock(file: Record<string, any>, param: string): Block {
  const data = parseDataUrl(file.file_data);
  if (!data) {
    throw new UpstreamError(400, "Bedrock Converse accepts files only as base64 data URLs in file.file_data", {
      param: `${param}.file_data`,
    });
  }
  const format = DOCUMENT_FORMATS[data.mediaType];
  if (!format) {
    throw new UpstreamError(400, `Unsupported document type ${data.mediaType || "(none)"}`, {
      param: `${param}.file_data`,
    });
  }
  // Converse document names allow letters, digits, single spaces, hyphens, parentheses and square brackets.
  const name =
    String(file.filename ?? "document")
      .replace(/\.[^.]*$/, "")
      .replace(/[^A-Za-z0-9\s\-()[\]]/g, " ")
      .replace(/\s+/g, " ")
      .trim() || "document";
  return { document: { format, name, source: { bytes: data.base64 } } };
}

/**
 * Tool result content: strings and text parts become text blocks (understood by every model), images become
 * image blocks; a non-string JSON value (not valid OpenAI, but sent by some clients) becomes a json block.
 */
function toolResultContent(content: unknown, param: string): Block[] {
  if (typeof content === "string") return [{ text: content }];
  if (Array.isArray(content)) {
    const blocks = contentBlocks(content, param).filter((block) => !block.cachePoint);
    return blocks.length > 0 ? blocks : [{ text: "" }];
  }
  if (content !== null && content !== undefined) return [{ json: content }];
  return [{ text: "" }];
}

function parseArguments(value: unknown, param: string): unknown {
  if (isObject(value)) return value;
  if (typeof value !== "string" || value.trim() === "") return {};
  try {
    return JSON.parse(value);
  } catch {
    throw new UpstreamError(400, "tool call arguments must be a JSON string", { param });
  }
}

/**
 * tools/tool_choice -> toolConfig. Converse has no "none" choice, and rejects toolUse/toolResult blocks in the
 * history unless toolConfig is present. So: tool_choice "none" omits toolConfig when the history has no tool
 * blocks; otherwise the tools are sent without a toolChoice (the model may still call one). With no tools but
 * tool blocks in the history, placeholder specs are declared for the tool names used there.
 */
function convertTools(body: Record<string, any>, messages: ConverseMessage[]): Record<string, any> | undefined {
  const historyHasTools = messages.some((m) => m.content.some((block) => block.toolUse || block.toolResult));
  const tools = Array.isArray(body.tools)
    ? body.tools.filter((tool: any) => tool?.type === "function" || tool?.function)
    : [];
  const choice = body.tool_choice;

  if (tools.length === 0) {
    if (!historyHasTools) return undefined;
    const names = new Set<string>();
    for (const message of messages)
      for (const block of message.content) if (block.toolUse?.name) names.add(block.toolUse.name);
    if (names.size === 0) names.add("tool");
    return {
      tools: [...names].map((name) => ({
        toolSpec: {
          name,
          description: `Tool ${name} (used earlier in this conversation)`,
          inputSchema: { json: { type: "object" } },
        },
      })),
    };
  }

  if (choice === "none" && !historyHasTools) return undefined;
  const specs = tools.map((tool: any) => {
    const fn = tool.function ?? {};
    const spec: Record<string, any> = {
      name: fn.name,
      inputSchema: { json: isObject(fn.parameters) ? fn.parameters : { type: "object", properties: {} } },
    };
    if (fn.description) spec.description = fn.description;
    return { toolSpec: spec };
  });
  const config: Record<string, any> = { tools: specs };
  if (choice === "auto") config.toolChoice = { auto: {} };
  else if (choice === "required") config.toolChoice = { any: {} };
  else if (isObject(choice) && choice.function?.name) config.toolChoice = { tool: { name: choice.function.name } };
  return config;
}

// ---------------------------------------------------------------------------------------------------------------
// Response

export function mapStopReason(reason: unknown): FinishReason {
  switch (reason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "guardrail_intervened":
    case "content_filtered":
      return "content_filter";
    default:
      // end_turn, stop_sequence, malformed_* and anything new.
      return "stop";
  }
}

/** Bedrock TokenUsage -> OpenAI usage. inputTokens excludes cache reads and writes, prompt_tokens includes them. */
export function mapUsage(usage: Record<string, any> | undefined): ChatUsage {
  const input = num(usage?.inputTokens);
  const cacheRead = num(usage?.cacheReadInputTokens);
  const cacheWrite = num(usage?.cacheWriteInputTokens);
  const completion = num(usage?.outputTokens);
  const prompt = input + cacheRead + cacheWrite;
  const out: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (usage?.cacheReadInputTokens !== undefined || usage?.cacheWriteInputTokens !== undefined) {
    out.prompt_tokens_details = { cached_tokens: cacheRead, cache_creation_tokens: cacheWrite };
  }
  return out;
}

export function completionId(ctx: TransformContext): string {
  return ctx.requestId.startsWith("chatcmpl") ? ctx.requestId : `chatcmpl-${ctx.requestId}`;
}

export function fromConverseResponse(upstream: any, ctx: TransformContext): object {
  const content: Block[] = Array.isArray(upstream?.output?.message?.content) ? upstream.output.message.content : [];
  let text = "";
  let reasoning = "";
  const toolCalls: object[] = [];
  for (const block of content) {
    if (typeof block.text === "string") text += block.text;
    else if (block.toolUse) {
      toolCalls.push({
        id: block.toolUse.toolUseId,
        type: "function",
        function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    } else if (typeof block.reasoningContent?.reasoningText?.text === "string") {
      reasoning += block.reasoningContent.reasoningText.text;
    }
  }
  const message: Record<string, any> = {
    role: "assistant",
    content: text || (toolCalls.length > 0 ? null : ""),
    refusal: null,
  };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: completionId(ctx),
    object: "chat.completion",
    created: ctx.now,
    model: ctx.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(upstream?.stopReason) }],
    usage: mapUsage(upstream?.usage),
  };
}

function isObject(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function num(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}
