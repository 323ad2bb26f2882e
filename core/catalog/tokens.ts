import type { Tiktoken } from "js-tiktoken/lite";

/**
 * Token counting for when a provider omits usage. OpenAI-family models are counted exactly with the
 * o200k/cl100k encodings (loaded lazily: the rank tables are large); other models are estimated with the
 * same encoding, which is close for most modern tokenizers. Callers mark such usage as estimated.
 */

let o200k: Promise<Tiktoken> | undefined;
let cl100k: Promise<Tiktoken> | undefined;

async function encoderFor(model: string): Promise<Tiktoken> {
  const { Tiktoken: Encoder } = await import("js-tiktoken/lite");
  if (/^(gpt-4($|-)|gpt-4-|gpt-3\.5|text-embedding-(ada|3))/.test(model)) {
    cl100k ??= import("js-tiktoken/ranks/cl100k_base").then((ranks) => new Encoder(ranks.default));
    return cl100k;
  }
  o200k ??= import("js-tiktoken/ranks/o200k_base").then((ranks) => new Encoder(ranks.default));
  return o200k;
}

export async function countTokens(model: string, text: string): Promise<number> {
  if (!text) return 0;
  const encoder = await encoderFor(model);
  return encoder.encode(text, "all").length;
}

/** Prompt tokens of chat messages: text of every message plus the per-message framing OpenAI documents. */
export async function countChatPromptTokens(model: string, messages: Array<Record<string, any>>): Promise<number> {
  let text = "";
  for (const message of messages) {
    text += `${message.role ?? ""}\n${contentText(message.content)}\n`;
    if (message.tool_calls) text += JSON.stringify(message.tool_calls);
  }
  return (await countTokens(model, text)) + messages.length * 3 + 3;
}

export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (typeof part === "string" ? part : typeof part?.text === "string" ? part.text : ""))
      .join("");
  }
  return "";
}
