import type { FoundTexts, TextSlot } from "../types.ts";

/**
 * Guardrails read (and may rewrite) the texts of a Messages body and answer through these slots. Input: the
 * system prompt and every message's string content or text blocks; the last message is what is judged.
 * Output: each text block of the answer, all judged.
 */

type Json = Record<string, any>;

export function messagesInputTexts(body: Json): FoundTexts {
  const slots: TextSlot[] = [];
  if (typeof body.system === "string") slots.push({ path: ["system"], text: body.system });
  else if (Array.isArray(body.system)) {
    body.system.forEach((block: Json, i: number) => {
      if (block?.type === "text" && typeof block.text === "string")
        slots.push({ path: ["system", i, "text"], text: block.text });
    });
  }
  const messages: Json[] = Array.isArray(body.messages) ? body.messages : [];
  let lastFrom = slots.length;
  messages.forEach((message, i) => {
    lastFrom = slots.length;
    slots.push(...contentSlots(message?.content, ["messages", i, "content"]));
  });
  return { slots, judged: { from: messages.length ? lastFrom : slots.length, to: slots.length } };
}

export function messagesOutputTexts(answer: Json): FoundTexts {
  const slots = contentSlots(Array.isArray(answer.content) ? answer.content : [], ["content"]);
  return { slots, judged: { from: 0, to: slots.length } };
}

function contentSlots(content: unknown, path: Array<string | number>): TextSlot[] {
  if (typeof content === "string") return [{ path, text: content }];
  if (!Array.isArray(content)) return [];
  const slots: TextSlot[] = [];
  content.forEach((block: Json, j) => {
    if (block?.type === "text" && typeof block.text === "string")
      slots.push({ path: [...path, j, "text"], text: block.text });
  });
  return slots;
}
