import { loadedFormat } from "../formats/registry.ts";
import { MEDIA_ROUTES, type RouteKind } from "../../providers/types.ts";
import { catalogModel, priceMetered, priceUsage } from "../catalog/load.ts";
import { familyUsageOf } from "../gateway/family-usage.ts";

/**
 * What a request may use, estimated before the call: token and cost usage limits reserve it (enforcer.ts) and
 * settle the difference with the real usage afterwards. Prompt tokens are estimated from the characters of the
 * prompt's text (no tokenizer on the request path: counting a large prompt exactly costs more than the call's
 * admission should); output tokens are what the request allows (`max_completion_tokens`, `max_tokens`, times
 * `n`), else the model's output limit from the catalog, capped.
 */

export interface UsageEstimate {
  tokens: number;
  costUsd: number;
  /** False when the model has no price: cost limits refuse it, or estimate it at their fallback rate. */
  priced?: boolean;
  promptTokens?: number;
  completionTokens?: number;
}

/**
 * Output tokens reserved for a request that sets no `max_tokens`: the model's catalog output limit, but no more
 * than this (a model allowing 100k output tokens would otherwise hold a small budget for one request at a time).
 */
export const DEFAULT_RESERVED_OUTPUT_TOKENS = 4096;
/** The usual ratio of English text; denser scripts use more tokens per character (docs/limits.md). */
const CHARS_PER_TOKEN = 4;
/** Tokens OpenAI documents for each message's framing, and for priming the answer. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_PROMPT = 3;

const NOTHING: UsageEstimate = Object.freeze({ tokens: 0, costUsd: 0 });

export async function reservationFor(
  route: string,
  body: Record<string, any>,
  provider: string,
): Promise<UsageEstimate> {
  const format = loadedFormat(route as RouteKind);
  if (format) {
    // An inbound format reserves what the chat request it translates to would.
    let chat: Record<string, any>;
    try {
      chat = format.toChat(body);
    } catch {
      return NOTHING;
    }
    return reservationFor("chat", chat, provider);
  }
  const model = typeof body.model === "string" ? body.model : "";
  let prompt: number;
  let output: number;
  if (route === "chat") {
    prompt = chatPromptTokens(body);
    output = (await outputPerChoice(body, provider, model)) * choices(body.n);
  } else if (route === "completions") {
    prompt = inputTokens(body.prompt) + inputTokens(body.suffix) + TOKENS_PER_PROMPT;
    output = (await outputPerChoice(body, provider, model)) * Math.max(choices(body.n), choices(body.best_of));
  } else if (route === "embeddings") {
    prompt = inputTokens(body.input);
    output = 0;
  } else if (MEDIA_ROUTES.has(route as RouteKind)) {
    // Billed by the unit: what the request asks for (images, characters, the audio's seconds) at its price.
    const metered = await familyUsageOf(route as RouteKind, body, undefined);
    if (!metered) return NOTHING;
    const cost = await priceMetered(provider, model, metered);
    return {
      tokens: metered.usage?.total_tokens ?? 0,
      costUsd: cost.total,
      priced: cost.priced,
      promptTokens: metered.usage?.prompt_tokens,
      completionTokens: metered.usage?.completion_tokens,
    };
  } else {
    return NOTHING;
  }
  const tokens = prompt + output;
  const cost = await priceUsage(provider, model, {
    prompt_tokens: prompt,
    completion_tokens: output,
    total_tokens: tokens,
  });
  return { tokens, costUsd: cost.total, priced: cost.priced, promptTokens: prompt, completionTokens: output };
}

async function outputPerChoice(body: Record<string, any>, provider: string, model: string): Promise<number> {
  const asked = body.max_completion_tokens ?? body.max_tokens;
  if (typeof asked === "number" && asked >= 0) return asked;
  const limit = (await catalogModel(provider, model))?.maxOutputTokens;
  return limit !== undefined && limit < DEFAULT_RESERVED_OUTPUT_TOKENS ? limit : DEFAULT_RESERVED_OUTPUT_TOKENS;
}

function choices(n: unknown): number {
  return typeof n === "number" && n >= 1 ? n : 1;
}

function chatPromptTokens(body: Record<string, any>): number {
  const messages: unknown[] = Array.isArray(body.messages) ? body.messages : [];
  let chars = 0;
  for (const message of messages as Array<Record<string, any>>) {
    chars += textChars(message?.content);
    if (Array.isArray(message?.tool_calls)) {
      for (const call of message.tool_calls)
        chars += textChars(call?.function?.name) + textChars(call?.function?.arguments);
    }
  }
  // Tool definitions are part of the prompt too.
  if (Array.isArray(body.tools) && body.tools.length > 0) chars += JSON.stringify(body.tools).length;
  return Math.ceil(chars / CHARS_PER_TOKEN) + messages.length * TOKENS_PER_MESSAGE + TOKENS_PER_PROMPT;
}

/** Characters of text in a message content: a string, or the text of its parts (images are not text). */
function textChars(content: unknown): number {
  if (typeof content === "string") return content.length;
  if (!Array.isArray(content)) return 0;
  let chars = 0;
  for (const part of content) {
    if (typeof part === "string") chars += part.length;
    else if (typeof part?.text === "string") chars += part.text.length;
  }
  return chars;
}

/** Tokens of a prompt or input: text (estimated), token ids (counted), or a list of either. */
function inputTokens(input: unknown): number {
  if (typeof input === "string") return Math.ceil(input.length / CHARS_PER_TOKEN);
  if (!Array.isArray(input)) return 0;
  let tokens = 0;
  for (const item of input) {
    if (typeof item === "number") tokens += 1;
    else tokens += inputTokens(item);
  }
  return tokens;
}
