import { badRequest } from "../../../http/errors.ts";
import { jsonSchemaOf } from "./json-schema.ts";

/**
 * Gemini GenerateContentRequest -> OpenAI chat completions request, for providers reached through their chat
 * adapter. What chat has no room for is dropped when it only tunes the answer (topK, safetySettings, thought parts
 * and their signatures) and refused with a 400 naming the field when it changes what the model is asked or can do
 * (Google's own tools, cachedContent, code execution parts, non-text output modalities, files only Google holds).
 */

type Json = Record<string, any>;
type Path = Array<string | number>;

export function geminiToChat(body: Json): Json {
  if (typeof body.cachedContent === "string") {
    throw unsupported("cachedContent names content cached by Google; this provider cannot read it", ["cachedContent"]);
  }
  const chat: Json = { model: body.model, messages: chatMessages(body) };
  Object.assign(chat, generationParams(body.generationConfig ?? {}));
  const tools = chatTools(body.tools);
  if (tools.length) {
    chat.tools = tools;
    Object.assign(chat, toolChoice(body.toolConfig?.functionCallingConfig, chat));
  }
  if (body.stream === true) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

function chatMessages(body: Json): Json[] {
  const messages: Json[] = [];
  const system = textOf(body.systemInstruction?.parts);
  if (system) messages.push({ role: "system", content: system });
  /** Calls of the last model turn not yet answered: a function response without an id names its call by name. */
  let pending: Array<{ id: string; name: string }> = [];
  const contents: Json[] = Array.isArray(body.contents) ? body.contents : [];
  contents.forEach((content, i) => {
    const path: Path = ["contents", i, "parts"];
    const parts: Json[] = Array.isArray(content?.parts) ? content.parts : [];
    if (content?.role === "model") {
      const turn = modelTurn(parts, path, i);
      pending = turn.calls;
      if (turn.message) messages.push(turn.message);
    } else messages.push(...userTurn(parts, path, pending));
  });
  return messages;
}

/** A model turn: text -> content, functionCall -> tool_calls (ids made up where Gemini gave none); thoughts dropped. */
function modelTurn(
  parts: Json[],
  path: Path,
  turn: number,
): { message?: Json; calls: Array<{ id: string; name: string }> } {
  const texts: string[] = [];
  const toolCalls: Json[] = [];
  parts.forEach((part, j) => {
    if (part.thought === true) return;
    if (part.functionCall) {
      const id = part.functionCall.id || `call_${turn}_${j}`;
      const args = part.functionCall.args ?? {};
      toolCalls.push({
        id,
        type: "function",
        function: { name: part.functionCall.name, arguments: JSON.stringify(args) },
      });
    } else if (typeof part.text === "string") texts.push(part.text);
    else if (part.executableCode || part.codeExecutionResult) {
      throw unsupported("code execution parts run only on Google's models", [...path, j]);
    }
  });
  const calls = toolCalls.map((call) => ({ id: call.id as string, name: call.function.name as string }));
  if (!texts.length && !toolCalls.length) return { calls };
  const message: Json = { role: "assistant", content: texts.length ? texts.join("") : null };
  if (toolCalls.length) message.tool_calls = toolCalls;
  return { message, calls };
}

/**
 * A user turn: its function responses first (each a `tool` message right after the calls it answers, as chat
 * wants), then the rest of its parts as one user message.
 */
function userTurn(parts: Json[], path: Path, pending: Array<{ id: string; name: string }>): Json[] {
  const out: Json[] = [];
  const content: Json[] = [];
  const unanswered = [...pending];
  parts.forEach((part, j) => {
    const at = [...path, j];
    if (part.functionResponse) {
      const { id, name, response } = part.functionResponse;
      const call = unanswered.findIndex((candidate) => (id ? candidate.id === id : candidate.name === name));
      if (call < 0) throw unsupported(`no earlier functionCall ${id ? `with id '${id}'` : `named '${name}'`}`, at);
      const [answered] = unanswered.splice(call, 1);
      out.push({ role: "tool", tool_call_id: answered!.id, content: JSON.stringify(response ?? {}) });
    } else if (part.thought !== true) content.push(...userParts(part, at));
  });
  if (content.length) {
    const onlyText = content.every((item) => item.type === "text");
    out.push({ role: "user", content: onlyText ? content.map((item) => item.text).join("") : content });
  }
  return out;
}

function userParts(part: Json, at: Path): Json[] {
  if (typeof part.text === "string") return part.text ? [{ type: "text", text: part.text }] : [];
  if (part.inlineData) return [inlinePart(part.inlineData.mimeType, part.inlineData.data, [...at, "inlineData"])];
  if (part.fileData) {
    const { mimeType, fileUri } = part.fileData;
    if (/^https?:\/\//.test(fileUri) && (!mimeType || String(mimeType).startsWith("image/"))) {
      return [{ type: "image_url", image_url: { url: fileUri } }];
    }
    throw unsupported("only images by http(s) URL can be sent to this provider by fileData", [...at, "fileData"]);
  }
  if (part.executableCode || part.codeExecutionResult) {
    throw unsupported("code execution parts run only on Google's models", at);
  }
  return [];
}

/** Inline bytes: images and audio as chat's own parts, anything else (PDF...) as a file part. */
function inlinePart(mimeType: string, data: string, at: Path): Json {
  if (mimeType.startsWith("image/"))
    return { type: "image_url", image_url: { url: `data:${mimeType};base64,${data}` } };
  const audio = /^audio\/(wav|x-wav|mp3|mpeg)$/.exec(mimeType)?.[1];
  if (audio) return { type: "input_audio", input_audio: { data, format: audio.endsWith("wav") ? "wav" : "mp3" } };
  if (mimeType.startsWith("audio/") || mimeType.startsWith("video/")) {
    throw unsupported(`inline ${mimeType} cannot be sent to this provider`, at);
  }
  return { type: "file", file: { file_data: `data:${mimeType};base64,${data}`, filename: "document" } };
}

function textOf(parts: unknown): string {
  if (!Array.isArray(parts)) return "";
  return parts
    .filter((part) => typeof part?.text === "string" && part.thought !== true)
    .map((part) => part.text)
    .join("\n");
}

/** generationConfig -> chat's sampling and output fields. */
function generationParams(config: Json): Json {
  const out: Json = {};
  if (typeof config.temperature === "number") out.temperature = config.temperature;
  if (typeof config.topP === "number") out.top_p = config.topP;
  if (typeof config.maxOutputTokens === "number") out.max_tokens = config.maxOutputTokens;
  if (typeof config.candidateCount === "number" && config.candidateCount > 1) out.n = config.candidateCount;
  if (Array.isArray(config.stopSequences) && config.stopSequences.length) out.stop = [...config.stopSequences];
  if (typeof config.presencePenalty === "number") out.presence_penalty = config.presencePenalty;
  if (typeof config.frequencyPenalty === "number") out.frequency_penalty = config.frequencyPenalty;
  if (typeof config.seed === "number") out.seed = config.seed;
  if (config.responseLogprobs === true) {
    out.logprobs = true;
    if (typeof config.logprobs === "number") out.top_logprobs = config.logprobs;
  }
  const modalities: unknown[] = Array.isArray(config.responseModalities) ? config.responseModalities : [];
  if (modalities.some((modality) => String(modality).toUpperCase() !== "TEXT")) {
    throw unsupported("this provider answers text only", ["generationConfig", "responseModalities"]);
  }
  const format = responseFormat(config);
  if (format) out.response_format = format;
  const effort = reasoningEffort(config.thinkingConfig);
  if (effort) out.reasoning_effort = effort;
  return out;
}

function responseFormat(config: Json): Json | undefined {
  if (config.responseMimeType !== "application/json") return undefined;
  const schema = config.responseJsonSchema ?? (config.responseSchema ? jsonSchemaOf(config.responseSchema) : undefined);
  if (!schema || typeof schema !== "object") return { type: "json_object" };
  return { type: "json_schema", json_schema: { name: "response", schema } };
}

/** thinkingLevel as it is (low / medium / high), or a thinking budget bucketed as Messages does; 0 and -1 leave the default. */
function reasoningEffort(thinking: Json | undefined): string | undefined {
  const level = typeof thinking?.thinkingLevel === "string" ? thinking.thinkingLevel.toLowerCase() : undefined;
  if (level === "low" || level === "medium" || level === "high" || level === "minimal") return level;
  const budget = thinking?.thinkingBudget;
  if (typeof budget !== "number" || budget <= 0) return undefined;
  return budget <= 2048 ? "low" : budget <= 8192 ? "medium" : "high";
}

/** functionDeclarations -> chat function tools; Google's own tools (search, code execution...) are refused. */
function chatTools(tools: unknown): Json[] {
  const out: Json[] = [];
  (Array.isArray(tools) ? tools : []).forEach((tool: Json, i) => {
    for (const kind of Object.keys(tool ?? {})) {
      if (kind !== "functionDeclarations") {
        throw unsupported(`the Gemini tool '${kind}' runs only on Google's models; send functionDeclarations`, [
          "tools",
          i,
          kind,
        ]);
      }
    }
    for (const declaration of Array.isArray(tool.functionDeclarations) ? tool.functionDeclarations : []) {
      const fn: Json = { name: declaration.name };
      if (declaration.description) fn.description = declaration.description;
      fn.parameters =
        declaration.parametersJsonSchema ??
        (declaration.parameters ? jsonSchemaOf(declaration.parameters) : { type: "object", properties: {} });
      out.push({ type: "function", function: fn });
    }
  });
  return out;
}

/**
 * functionCallingConfig -> tool_choice: AUTO and VALIDATED `auto`, NONE `none`, ANY `required` (one allowed name:
 * that function; several: the tools narrowed to them).
 */
function toolChoice(config: Json | undefined, chat: Json): Json {
  const allowed: string[] = Array.isArray(config?.allowedFunctionNames) ? config.allowedFunctionNames : [];
  switch (config?.mode) {
    case "NONE":
      return { tool_choice: "none" };
    case "ANY":
      if (allowed.length === 1) return { tool_choice: { type: "function", function: { name: allowed[0] } } };
      if (allowed.length > 1) chat.tools = chat.tools.filter((tool: Json) => allowed.includes(tool.function.name));
      return { tool_choice: "required" };
    case "AUTO":
    case "VALIDATED":
      return { tool_choice: "auto" };
    default:
      return {};
  }
}

function unsupported(message: string, at: Path) {
  return badRequest(`${paramOf(at)}: ${message}.`, paramOf(at), "unsupported_parameter");
}

/** `["contents", 0, "parts", 1]` -> `contents[0].parts[1]` (the param style of core/http/json.ts). */
function paramOf(path: Path): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}
