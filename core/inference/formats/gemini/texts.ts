import type { FoundTexts, TextSlot } from "../types.ts";

/**
 * Guardrails read (and may rewrite) the texts of a Gemini body and answer through these slots. Input: the system
 * instruction's and every turn's text parts (thoughts are the model's, not input); the last turn is what is
 * judged. Output: the text parts of every candidate (thoughts left out), all judged.
 */

type Json = Record<string, any>;

export function geminiInputTexts(body: Json): FoundTexts {
  const slots = partSlots(body.systemInstruction?.parts, ["systemInstruction", "parts"]);
  const contents: Json[] = Array.isArray(body.contents) ? body.contents : [];
  let lastFrom = slots.length;
  contents.forEach((content, i) => {
    lastFrom = slots.length;
    slots.push(...partSlots(content?.parts, ["contents", i, "parts"]));
  });
  return { slots, judged: { from: contents.length ? lastFrom : slots.length, to: slots.length } };
}

export function geminiOutputTexts(answer: Json): FoundTexts {
  const candidates: Json[] = Array.isArray(answer.candidates) ? answer.candidates : [];
  const slots = candidates.flatMap((candidate, c) =>
    partSlots(candidate?.content?.parts, ["candidates", c, "content", "parts"]),
  );
  return { slots, judged: { from: 0, to: slots.length } };
}

function partSlots(parts: unknown, path: Array<string | number>): TextSlot[] {
  if (!Array.isArray(parts)) return [];
  const slots: TextSlot[] = [];
  parts.forEach((part: Json, j) => {
    if (typeof part?.text === "string" && part.thought !== true)
      slots.push({ path: [...path, j, "text"], text: part.text });
  });
  return slots;
}
