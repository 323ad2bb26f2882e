/**
 * The texts of a request or an answer body, in the order of `CheckInput.parts`: on input every message's text
 * (a string content, or each `text` part of an array content), the prompt(s) of a completion, the input(s) of
 * an embedding; on output the content (or text) of every choice. The webhook check reads a body its webhook
 * rewrote with it, to hand the runner the rewritten parts.
 */

type Body = Record<string, unknown>;

export function requestTexts(body: Body): string[] {
  if (Array.isArray(body.messages)) return body.messages.flatMap((message) => contentTexts(message?.content));
  if (body.prompt !== undefined) return stringsOf(body.prompt);
  if (body.input !== undefined) return stringsOf(body.input);
  return [];
}

export function responseTexts(body: Body): string[] {
  if (!Array.isArray(body.choices)) return [];
  return body.choices.flatMap((choice) =>
    typeof choice?.text === "string" ? [choice.text] : contentTexts(choice?.message?.content),
  );
}

/** What `CheckInput.text` is on input: the last message's text, the prompt, the last input of an embedding. */
export function requestText(body: Body): string {
  if (Array.isArray(body.messages)) return contentTexts(body.messages.at(-1)?.content).join("\n");
  if (body.prompt !== undefined) return stringsOf(body.prompt).join("\n");
  return stringsOf(body.input).at(-1) ?? "";
}

function contentTexts(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((part) => (part?.type === "text" && typeof part.text === "string" ? [part.text] : []));
}

function stringsOf(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === "string");
}
