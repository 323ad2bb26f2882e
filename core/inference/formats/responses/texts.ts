import type { FoundTexts, TextSlot } from "../types.ts";

/**
 * Where guardrails find the texts of a Responses request and answer (and write redactions back).
 *
 * - input: `instructions`; a string `input`, or each message item's string content or the `text` of its
 *   input_text / output_text parts. Judged: the texts of the last message item (the turn being answered), or
 *   the instructions when the input holds no message.
 * - output: the `text` of each output_text part of each message item, all judged. The `output_text` aggregate
 *   repeats them: it is the last slot, outside the judged range, so a redaction rewrites it too.
 */

type Json = Record<string, any>;

const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function inputTexts(body: Record<string, any>): FoundTexts {
  const slots: TextSlot[] = [];
  if (typeof body.instructions === "string") slots.push({ path: ["instructions"], text: body.instructions });
  let judged = { from: 0, to: slots.length };
  if (typeof body.input === "string") {
    judged = { from: slots.length, to: slots.length + 1 };
    slots.push({ path: ["input"], text: body.input });
  } else if (Array.isArray(body.input)) {
    body.input.forEach((item: unknown, index: number) => {
      if (!isRecord(item) || !isMessage(item)) return;
      const from = slots.length;
      if (typeof item.content === "string") {
        slots.push({ path: ["input", index, "content"], text: item.content });
      } else if (Array.isArray(item.content)) {
        item.content.forEach((part: unknown, partIndex: number) => {
          if (
            isRecord(part) &&
            (part.type === "input_text" || part.type === "output_text") &&
            typeof part.text === "string"
          ) {
            slots.push({ path: ["input", index, "content", partIndex, "text"], text: part.text });
          }
        });
      }
      judged = { from, to: slots.length };
    });
  }
  return { slots, judged };
}

/** A message item: `type: "message"`, or no type and a role (EasyInputMessage). */
function isMessage(item: Json): boolean {
  return item.type === "message" || (item.type === undefined && typeof item.role === "string");
}

export function outputTexts(answer: Record<string, any>): FoundTexts {
  const slots: TextSlot[] = [];
  const output = Array.isArray(answer.output) ? answer.output : [];
  output.forEach((item: unknown, index: number) => {
    if (!isRecord(item) || item.type !== "message" || !Array.isArray(item.content)) return;
    item.content.forEach((part: unknown, partIndex: number) => {
      if (isRecord(part) && part.type === "output_text" && typeof part.text === "string") {
        slots.push({ path: ["output", index, "content", partIndex, "text"], text: part.text });
      }
    });
  });
  const judged = { from: 0, to: slots.length };
  if (typeof answer.output_text === "string") slots.push({ path: ["output_text"], text: answer.output_text });
  return { slots, judged };
}
