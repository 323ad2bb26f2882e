import { canonicalBody } from "./cache-key.ts";

/**
 * What a semantic hit compares by meaning and what it compares exactly. Chat: the last user message(s) (the
 * trailing run of user messages) by meaning, everything else (system prompt, earlier messages, model, params,
 * tools) exactly. Completions: the prompt by meaning. Anything else has no part to compare by meaning.
 */
export interface SemanticSplit {
  /** The text to embed. */
  text: string;
  /** Canonical JSON of the request without that text. */
  exact: string;
}

/** Longest text embedded for a lookup (characters): longer prompts are cut, the rest still matched exactly. */
const MAX_EMBEDDED_CHARS = 32 * 1024;

export function semanticSplit(route: string, body: Record<string, any>): SemanticSplit | undefined {
  if (route === "completions") {
    if (typeof body.prompt !== "string" || body.prompt.trim() === "") return undefined;
    const { prompt, ...rest } = body;
    return { text: prompt.slice(0, MAX_EMBEDDED_CHARS), exact: canonicalBody(rest) };
  }
  if (route !== "chat" || !Array.isArray(body.messages)) return undefined;
  const messages: Array<Record<string, any>> = body.messages;
  let start = messages.length;
  while (start > 0 && messages[start - 1]?.role === "user") start--;
  if (start === messages.length) return undefined;
  const texts: string[] = [];
  for (const message of messages.slice(start)) {
    const text = textOf(message.content);
    // A user message with more than text (an image, a file) is matched exactly, not by meaning.
    if (text === undefined) return undefined;
    texts.push(text);
  }
  const text = texts.join("\n").trim();
  if (text === "") return undefined;
  // The kept messages stay in the exact part, with how many user messages were compared by meaning.
  const exact = canonicalBody({ ...body, messages: messages.slice(0, start), semantic_user_messages: texts.length });
  return { text: text.slice(0, MAX_EMBEDDED_CHARS), exact };
}

function textOf(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const parts: string[] = [];
  for (const part of content) {
    if (part?.type !== "text" || typeof part.text !== "string") return undefined;
    parts.push(part.text);
  }
  return parts.join("\n");
}
