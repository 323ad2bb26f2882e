import { mapUpstreamError } from "../errors.ts";
import {
  type ChatUsage,
  type FinishReason,
  type StreamTransformer,
  type TransformContext,
  type UpstreamEvent,
  UpstreamError,
} from "../types.ts";
import { toGeminiSchema } from "./schema.ts";

/**
 * OpenAI chat completions <-> Gemini `generateContent` (shared by the Gemini API and Vertex AI, whose
 * GenerateContentRequest/Response bodies are the same). Pure functions; URLs and auth live in the adapters.
 */

type Json = Record<string, any>;

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: Json };
  functionResponse?: { name: string; response: Json };
  [key: string]: unknown;
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/**
 * Documented placeholder for a function call whose thought signature is unknown (history written by the client or
 * by another model). Gemini 3 models answer 400 when the first function call of a model turn has no signature.
 */
export const UNKNOWN_THOUGHT_SIGNATURE = "skip_thought_signature_validator";

/** OpenAI `reasoning_effort` -> thinking budget (tokens). */
const EFFORT_BUDGETS: Record<string, number> = { none: 0, minimal: 512, low: 1024, medium: 8192, high: 24576 };

const FINISH_REASONS: Record<string, FinishReason> = {
  STOP: "stop",
  MAX_TOKENS: "length",
  SAFETY: "content_filter",
  RECITATION: "content_filter",
  BLOCKLIST: "content_filter",
  PROHIBITED_CONTENT: "content_filter",
  SPII: "content_filter",
  IMAGE_SAFETY: "content_filter",
  IMAGE_PROHIBITED_CONTENT: "content_filter",
  IMAGE_RECITATION: "content_filter",
  MODEL_ARMOR: "content_filter",
};

// ---------------------------------------------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------------------------------------------

/** OpenAI chat completion body -> GenerateContentRequest body (no model field: the model is in the URL). */
export function toGeminiRequest(body: Json, model: string): Json {
  const { contents, systemInstruction } = toGeminiContents(Array.isArray(body.messages) ? body.messages : [], model);
  const request: Json = { contents };
  if (systemInstruction) request.systemInstruction = systemInstruction;

  const declarations = toFunctionDeclarations(body.tools);
  if (declarations.length > 0) request.tools = [{ functionDeclarations: declarations }];
  const toolConfig = toToolConfig(body.tool_choice);
  if (toolConfig && declarations.length > 0) request.toolConfig = toolConfig;

  const generationConfig = toGenerationConfig(body);
  if (Object.keys(generationConfig).length > 0) request.generationConfig = generationConfig;

  // Gemini-native fields some clients send through an OpenAI-shaped body.
  const safetySettings = body.safety_settings ?? body.safetySettings;
  if (Array.isArray(safetySettings)) request.safetySettings = safetySettings;
  const cachedContent = body.cached_content ?? body.cachedContent;
  if (typeof cachedContent === "string") request.cachedContent = cachedContent;
  return request;
}

export function toGeminiContents(
  messages: Json[],
  model: string,
): { contents: GeminiContent[]; systemInstruction?: { parts: GeminiPart[] } } {
  const system: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  /** tool_call id -> function name, filled as assistant turns go by (a tool message names its call by id only). */
  const callNames = new Map<string, string>();
  const placeholderSignatures = needsThoughtSignatures(model);

  const append = (role: GeminiContent["role"], parts: GeminiPart[]) => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };

  for (const message of messages) {
    if (!message || typeof message !== "object") continue;
    switch (message.role) {
      case "system":
      case "developer":
        system.push(...textParts(message.content));
        break;
      case "user":
        append("user", userParts(message.content));
        break;
      case "assistant": {
        const parts = textParts(message.content);
        const calls: Json[] = Array.isArray(message.tool_calls) ? [...message.tool_calls] : [];
        if (message.function_call) calls.push({ id: message.function_call.name, function: message.function_call });
        let first = true;
        for (const call of calls) {
          const name = call?.function?.name;
          if (typeof name !== "string") continue;
          if (typeof call.id === "string") callNames.set(call.id, name);
          const part: GeminiPart = { functionCall: { name, args: parseArguments(call.function.arguments) } };
          const signature = call.extra_content?.google?.thought_signature;
          if (typeof signature === "string" && signature) part.thoughtSignature = signature;
          else if (first && placeholderSignatures) part.thoughtSignature = UNKNOWN_THOUGHT_SIGNATURE;
          first = false;
          parts.push(part);
        }
        append("model", parts);
        break;
      }
      case "tool":
      case "function": {
        const name =
          (message.role === "tool" ? callNames.get(message.tool_call_id) : undefined) ??
          (typeof message.name === "string" ? message.name : undefined);
        if (!name) {
          throw new UpstreamError(
            400,
            `No earlier assistant tool call has the id ${JSON.stringify(message.tool_call_id)}`,
            {
              param: "messages",
            },
          );
        }
        append("user", [{ functionResponse: { name, response: toFunctionResponse(message.content) } }]);
        break;
      }
      default:
        break;
    }
  }
  return { contents, systemInstruction: system.length > 0 ? { parts: system } : undefined };
}

/** Gemini 1.x/2.x do not validate thought signatures; later models require one on each turn's first call. */
function needsThoughtSignatures(model: string): boolean {
  return !/(^|\/)gemini-(1|2)(\.|-)/.test(model);
}

function textParts(content: unknown): GeminiPart[] {
  const text = textOf(content);
  return text ? [{ text }] : [];
}

/** Text of a string or of the text parts of a content array. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (part?.type === "text" || part?.type === "refusal" ? (part.text ?? part.refusal ?? "") : ""))
    .join("");
}

function userParts(content: unknown): GeminiPart[] {
  if (typeof content === "string") return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  const parts: GeminiPart[] = [];
  for (const part of content) {
    switch (part?.type) {
      case "text":
        if (part.text) parts.push({ text: part.text });
        break;
      case "image_url": {
        const url = typeof part.image_url === "string" ? part.image_url : part.image_url?.url;
        if (typeof url === "string") parts.push(mediaPart(url, "image/jpeg"));
        break;
      }
      case "input_audio":
        if (part.input_audio?.data) {
          parts.push({
            inlineData: { mimeType: `audio/${part.input_audio.format ?? "wav"}`, data: part.input_audio.data },
          });
        }
        break;
      case "file": {
        const file = part.file ?? {};
        if (typeof file.file_data === "string")
          parts.push(mediaPart(file.file_data, guessMimeType(file.filename ?? "") ?? "application/pdf"));
        else if (typeof file.file_id === "string" && /^(https?|gs):\/\//.test(file.file_id)) {
          parts.push(mediaPart(file.file_id, guessMimeType(file.filename ?? file.file_id) ?? "application/pdf"));
        }
        break;
      }
      default:
        break;
    }
  }
  return parts;
}

/** A data: URL becomes inline bytes; any other URL (https, gs) a file reference with a guessed MIME type. */
export function mediaPart(url: string, fallbackMime: string): GeminiPart {
  const data = parseDataUrl(url);
  if (data) return { inlineData: { mimeType: data.mimeType || fallbackMime, data: data.base64 } };
  return { fileData: { mimeType: guessMimeType(url) ?? fallbackMime, fileUri: url } };
}

function parseDataUrl(url: string): { mimeType: string; base64: string } | undefined {
  if (!url.startsWith("data:")) return undefined;
  const comma = url.indexOf(",");
  if (comma === -1) return undefined;
  const meta = url.slice(5, comma).split(";");
  const payload = url.slice(comma + 1);
  const isBase64 = meta.slice(1).some((item) => item.toLowerCase() === "base64");
  const base64 = isBase64 ? payload : Buffer.from(decodeURIComponent(payload), "utf8").toString("base64");
  return { mimeType: meta[0] ?? "", base64 };
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  heic: "image/heic",
  heif: "image/heif",
  pdf: "application/pdf",
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  html: "text/html",
  json: "application/json",
  mp3: "audio/mp3",
  wav: "audio/wav",
  ogg: "audio/ogg",
  flac: "audio/flac",
  aac: "audio/aac",
  m4a: "audio/m4a",
  mp4: "video/mp4",
  mpeg: "video/mpeg",
  mov: "video/mov",
  webm: "video/webm",
};

export function guessMimeType(url: string): string | undefined {
  if (/^https?:\/\/(www\.|m\.)?(youtube\.com|youtu\.be)\//i.test(url)) return "video/mp4";
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // a bare file name
  }
  const match = /\.([a-z0-9]+)$/i.exec(path);
  return match ? MIME_BY_EXTENSION[match[1].toLowerCase()] : undefined;
}

function parseArguments(value: unknown): Json {
  if (value && typeof value === "object" && !Array.isArray(value)) return value as Json;
  if (typeof value !== "string" || value.trim() === "") return {};
  try {
    const parsed = JSON.parse(value);
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : { value: parsed };
  } catch {
    return { value };
  }
}

/** Gemini wants an object: a JSON object result is sent as is, anything else as `{content: ...}`. */
function toFunctionResponse(content: unknown): Json {
  const text = textOf(content);
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed;
    return { content: parsed };
  } catch {
    return { content: text };
  }
}

function toFunctionDeclarations(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  const declarations: Json[] = [];
  for (const tool of tools) {
    if (tool?.type !== "function" || typeof tool.function?.name !== "string") continue;
    const declaration: Json = { name: tool.function.name };
    if (tool.function.description) declaration.description = tool.function.description;
    const parameters = toGeminiSchema(tool.function.parameters);
    // Gemini rejects an OBJECT schema without properties: a function without parameters declares none.
    if (parameters.properties && Object.keys(parameters.properties).length > 0) declaration.parameters = parameters;
    declarations.push(declaration);
  }
  return declarations;
}

function toToolConfig(choice: unknown): Json | undefined {
  if (choice === "auto") return { functionCallingConfig: { mode: "AUTO" } };
  if (choice === "none") return { functionCallingConfig: { mode: "NONE" } };
  if (choice === "required") return { functionCallingConfig: { mode: "ANY" } };
  const name = (choice as Json | undefined)?.function?.name;
  if (typeof name === "string") return { functionCallingConfig: { mode: "ANY", allowedFunctionNames: [name] } };
  return undefined;
}

function toGenerationConfig(body: Json): Json {
  const config: Json = {};
  if (typeof body.temperature === "number") config.temperature = body.temperature;
  if (typeof body.top_p === "number") config.topP = body.top_p;
  if (typeof body.top_k === "number") config.topK = body.top_k;
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (typeof maxTokens === "number") config.maxOutputTokens = maxTokens;
  if (typeof body.stop === "string") config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) config.stopSequences = body.stop;
  if (typeof body.n === "number") config.candidateCount = body.n;
  if (typeof body.seed === "number") config.seed = body.seed;
  if (typeof body.presence_penalty === "number") config.presencePenalty = body.presence_penalty;
  if (typeof body.frequency_penalty === "number") config.frequencyPenalty = body.frequency_penalty;
  if (body.logprobs === true) {
    config.responseLogprobs = true;
    if (typeof body.top_logprobs === "number") config.logprobs = body.top_logprobs;
  }

  const format = body.response_format;
  if (format?.type === "json_object") config.responseMimeType = "application/json";
  else if (format?.type === "json_schema") {
    config.responseMimeType = "application/json";
    const schema = format.json_schema?.schema;
    if (schema) config.responseSchema = toGeminiSchema(schema);
  }

  const thinking = body.thinking;
  if (thinking && typeof thinking === "object") {
    if (thinking.type === "disabled") config.thinkingConfig = { thinkingBudget: 0 };
    else {
      config.thinkingConfig = { includeThoughts: true };
      if (typeof thinking.budget_tokens === "number") config.thinkingConfig.thinkingBudget = thinking.budget_tokens;
    }
  } else if (typeof body.reasoning_effort === "string" && body.reasoning_effort in EFFORT_BUDGETS) {
    config.thinkingConfig = { thinkingBudget: EFFORT_BUDGETS[body.reasoning_effort] };
  }
  return config;
}

// ---------------------------------------------------------------------------------------------------------------
// Response
// ---------------------------------------------------------------------------------------------------------------

/** GenerateContentResponse -> OpenAI chat.completion. */
export function fromGeminiResponse(upstream: Json, ctx: TransformContext): Json {
  throwIfError(upstream, 200);
  const candidates: Json[] = Array.isArray(upstream?.candidates) ? upstream.candidates : [];
  const choices = candidates.map((candidate, position) => {
    const index = typeof candidate.index === "number" ? candidate.index : position;
    const { text, reasoning, toolCalls } = readParts(candidate.content?.parts, 0);
    // No text: null next to tool calls or for a blocked candidate (no content at all), else an empty answer.
    const content = text || (toolCalls.length > 0 || !candidate.content ? null : "");
    const message: Json = { role: "assistant", content, refusal: null };
    if (reasoning) message.reasoning_content = reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls.map(({ index: _index, ...call }) => call);
    return {
      index,
      message,
      logprobs: toLogprobs(candidate.logprobsResult),
      finish_reason: toFinishReason(candidate.finishReason, toolCalls.length > 0),
    };
  });
  if (choices.length === 0 && upstream?.promptFeedback?.blockReason) {
    choices.push({
      index: 0,
      message: { role: "assistant", content: null, refusal: null },
      logprobs: null,
      finish_reason: "content_filter",
    });
  }
  const completion: Json = {
    id: upstream?.responseId ?? ctx.requestId,
    object: "chat.completion",
    created: ctx.now,
    model: upstream?.modelVersion ?? ctx.model,
    choices,
  };
  const usage = toChatUsage(upstream?.usageMetadata);
  if (usage) completion.usage = usage;
  return completion;
}

interface ReadParts {
  text: string;
  reasoning: string;
  toolCalls: Array<
    { index: number; id: string; type: "function"; function: { name: string; arguments: string } } & Json
  >;
}

/** Splits parts into answer text, thought text and tool calls; `firstCall` numbers generated call ids. */
function readParts(parts: unknown, firstCall: number): ReadParts {
  const out: ReadParts = { text: "", reasoning: "", toolCalls: [] };
  if (!Array.isArray(parts)) return out;
  for (const part of parts as GeminiPart[]) {
    if (part.functionCall) {
      const index = firstCall + out.toolCalls.length;
      const call: ReadParts["toolCalls"][number] = {
        index,
        id: part.functionCall.id || `call_${index}`,
        type: "function",
        function: { name: part.functionCall.name, arguments: JSON.stringify(part.functionCall.args ?? {}) },
      };
      // Google's own OpenAI-compatible surface carries the signature here; clients echo it back with the call.
      if (part.thoughtSignature) call.extra_content = { google: { thought_signature: part.thoughtSignature } };
      out.toolCalls.push(call);
    } else if (typeof part.text === "string") {
      if (part.thought) out.reasoning += part.text;
      else out.text += part.text;
    }
  }
  return out;
}

function toFinishReason(reason: unknown, hasToolCalls: boolean): FinishReason | null {
  if (typeof reason !== "string" || reason === "FINISH_REASON_UNSPECIFIED") return null;
  const mapped = FINISH_REASONS[reason] ?? "stop";
  return mapped === "stop" && hasToolCalls ? "tool_calls" : mapped;
}

function toLogprobs(result: Json | undefined): Json | null {
  const chosen = result?.chosenCandidates;
  if (!Array.isArray(chosen) || chosen.length === 0) return null;
  const top: Json[] = Array.isArray(result?.topCandidates) ? result.topCandidates : [];
  const entry = (candidate: Json) => ({
    token: candidate.token ?? "",
    logprob: candidate.logProbability ?? 0,
    bytes: candidate.token === undefined ? null : [...Buffer.from(String(candidate.token), "utf8")],
  });
  return {
    content: chosen.map((candidate: Json, position: number) => ({
      ...entry(candidate),
      top_logprobs: Array.isArray(top[position]?.candidates) ? top[position].candidates.map(entry) : [],
    })),
  };
}

/** usageMetadata -> OpenAI usage; thoughts count as completion tokens, as OpenAI counts reasoning tokens. */
export function toChatUsage(metadata: Json | undefined): ChatUsage | undefined {
  if (!metadata || typeof metadata !== "object") return undefined;
  const prompt = (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0);
  const thoughts = metadata.thoughtsTokenCount ?? 0;
  const completion = (metadata.candidatesTokenCount ?? 0) + thoughts;
  const usage: ChatUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const audioIn = modalityTokens(metadata.promptTokensDetails, "AUDIO");
  const imageIn = modalityTokens(metadata.promptTokensDetails, "IMAGE");
  if (typeof metadata.cachedContentTokenCount === "number" || audioIn || imageIn) {
    usage.prompt_tokens_details = {
      ...(typeof metadata.cachedContentTokenCount === "number" && { cached_tokens: metadata.cachedContentTokenCount }),
      ...(audioIn && { audio_tokens: audioIn }),
      ...(imageIn && { image_tokens: imageIn }),
    };
  }
  const audioOut = modalityTokens(metadata.candidatesTokensDetails, "AUDIO");
  const imageOut = modalityTokens(metadata.candidatesTokensDetails, "IMAGE");
  if (typeof metadata.thoughtsTokenCount === "number" || audioOut || imageOut) {
    usage.completion_tokens_details = {
      ...(typeof metadata.thoughtsTokenCount === "number" && { reasoning_tokens: thoughts }),
      ...(audioOut && { audio_tokens: audioOut }),
      ...(imageOut && { image_tokens: imageOut }),
    };
  }
  return usage;
}

/** Tokens of one modality in usageMetadata's `promptTokensDetails` / `candidatesTokensDetails` (ModalityTokenCount[]). */
function modalityTokens(details: unknown, modality: string): number {
  if (!Array.isArray(details)) return 0;
  let tokens = 0;
  for (const entry of details as Json[])
    if (entry?.modality === modality && typeof entry.tokenCount === "number") tokens += entry.tokenCount;
  return tokens;
}

/** A Google error object (`{error: {code, message, status}}`) -> UpstreamError. */
export function throwIfError(body: unknown, fallbackStatus: number): void {
  const error = (body as Json | undefined)?.error;
  if (!error || typeof error !== "object") return;
  const code = Number(error.code);
  const status =
    Number.isInteger(code) && code >= 400 && code <= 599 ? code : fallbackStatus >= 400 ? fallbackStatus : 500;
  throw mapUpstreamError(status, JSON.stringify(body));
}

// ---------------------------------------------------------------------------------------------------------------
// Stream
// ---------------------------------------------------------------------------------------------------------------

/**
 * `streamGenerateContent?alt=sse` events (each a GenerateContentResponse) -> OpenAI chunks: a role chunk per choice,
 * text / reasoning deltas, complete tool calls, a finish chunk, and a final `{choices: [], usage}` chunk.
 */
export function createGeminiStreamTransformer(ctx: TransformContext): StreamTransformer {
  let id: string = ctx.requestId;
  let model = ctx.model;
  let idFixed = false;
  let usage: ChatUsage | undefined;
  const started = new Set<number>();
  const finished = new Set<number>();
  const callCounts = new Map<number, number>();

  const chunk = (choices: Json[], extra: Json = {}): Json => ({
    id,
    object: "chat.completion.chunk",
    created: ctx.now,
    model,
    choices,
    ...extra,
  });

  const start = (index: number, out: Json[]) => {
    if (started.has(index)) return;
    started.add(index);
    out.push(chunk([{ index, delta: { role: "assistant", content: "" }, logprobs: null, finish_reason: null }]));
  };

  return {
    push(event: UpstreamEvent) {
      const data = event.data.trim();
      if (!data || data === "[DONE]") return [];
      let payload: Json;
      try {
        payload = JSON.parse(data);
      } catch {
        throw new UpstreamError(502, "Gemini sent a stream event that is not JSON", { type: "server_error" });
      }
      throwIfError(payload, 500);
      if (!idFixed) {
        idFixed = true;
        if (typeof payload.responseId === "string") id = payload.responseId;
        if (typeof payload.modelVersion === "string") model = payload.modelVersion;
      }
      if (payload.usageMetadata) usage = toChatUsage(payload.usageMetadata);

      const out: Json[] = [];
      const candidates: Json[] = Array.isArray(payload.candidates) ? payload.candidates : [];
      candidates.forEach((candidate, position) => {
        const index = typeof candidate.index === "number" ? candidate.index : position;
        if (finished.has(index)) return;
        start(index, out);
        const firstCall = callCounts.get(index) ?? 0;
        const { text, reasoning, toolCalls } = readParts(candidate.content?.parts, firstCall);
        if (toolCalls.length > 0) callCounts.set(index, firstCall + toolCalls.length);
        const delta: Json = {};
        if (reasoning) delta.reasoning_content = reasoning;
        if (text) delta.content = text;
        if (toolCalls.length > 0) delta.tool_calls = toolCalls;
        const logprobs = toLogprobs(candidate.logprobsResult);
        if (Object.keys(delta).length > 0) out.push(chunk([{ index, delta, logprobs, finish_reason: null }]));
        const reason = toFinishReason(candidate.finishReason, (callCounts.get(index) ?? 0) > 0);
        if (reason) {
          finished.add(index);
          out.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: reason }]));
        }
      });
      if (candidates.length === 0 && payload.promptFeedback?.blockReason && !finished.has(0)) {
        start(0, out);
        finished.add(0);
        out.push(chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: "content_filter" }]));
      }
      return out;
    },
    end() {
      const out: Json[] = [];
      for (const index of started) {
        if (finished.has(index)) continue;
        finished.add(index);
        const reason: FinishReason = (callCounts.get(index) ?? 0) > 0 ? "tool_calls" : "stop";
        out.push(chunk([{ index, delta: {}, logprobs: null, finish_reason: reason }]));
      }
      if (usage) out.push(chunk([], { usage }));
      return out;
    },
  };
}
