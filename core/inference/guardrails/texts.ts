import type { RouteKind } from "../../providers/types.ts";
import { loadedFormat } from "../formats/registry.ts";
import { passthroughRouteOf } from "./passthrough-route.ts";
import type { GuardrailPhase } from "./types.ts";

/**
 * The texts a phase's checks see, found in a request body or an answer (contract: CheckInput in types.ts), and
 * the write-back of a redacting check's rewrite into a copy of that body or answer.
 *
 * - input, chat: every message's text (a string content, or the `text` of each `type: "text"` part), in order;
 *   the judged text is the last message's texts joined by newlines;
 * - input, completions: the prompt (each string of an array prompt); judged: all of them joined;
 * - input, embeddings: each string input; judged: the last one;
 * - output, chat: each choice's message content (string or text parts); completions: each choice's `text`;
 *   judged: the first choice's. Embeddings answers hold no text.
 * Token-array prompts and inputs, images and audio are not text and are left alone.
 */

type PathStep = string | number;

/** Where one text sits in the JSON, and the text. */
interface TextSlot {
  path: readonly PathStep[];
  text: string;
}

export interface PhaseTexts {
  /** Every text of the phase, in order (CheckInput.parts). */
  parts: string[];
  /** The judged text (CheckInput.text). */
  text: string;
  /** The judged text of rewritten parts: the same positions, joined the same way. */
  textOf(parts: readonly string[]): string;
  /** A copy of `json` with the rewritten parts written back (containers copied only along changed paths). */
  rewrite(json: Record<string, unknown>, parts: readonly string[]): Record<string, unknown>;
}

/** The texts of a request body (input) or of an answer (output) of an inference route. */
export function phaseTexts(route: RouteKind, phase: GuardrailPhase, json: Record<string, unknown>): PhaseTexts {
  const { slots, judged } = foundTexts(route, phase, json);
  const parts = slots.map((slot) => slot.text);
  const textOf = (texts: readonly string[]) =>
    texts
      .slice(judged.from, judged.to)
      .filter((text) => text !== "")
      .join("\n");
  return {
    parts,
    text: textOf(parts),
    textOf,
    rewrite: (target, rewritten) => writeBack(target, slots, rewritten),
  };
}

/** An inbound format (Responses, Messages) knows its own texts; the OpenAI-shaped routes are read here. */
function foundTexts(route: RouteKind, phase: GuardrailPhase, json: Record<string, unknown>): Found {
  const format = loadedFormat(route);
  if (format) return phase === "input" ? format.inputTexts(json) : format.outputTexts(json);
  return phase === "input" ? inputSlots(route, json) : outputSlots(route, json);
}

interface Found {
  slots: TextSlot[];
  /** The judged slots: [from, to). */
  judged: { from: number; to: number };
}

function inputSlots(route: RouteKind, body: Record<string, unknown>): Found {
  if (route === "chat") {
    const slots: TextSlot[] = [];
    const messages = Array.isArray(body.messages) ? body.messages : [];
    let lastFrom = 0;
    messages.forEach((message, index) => {
      lastFrom = slots.length;
      if (isRecord(message)) contentSlots(message.content, ["messages", index, "content"], slots);
    });
    return { slots, judged: { from: lastFrom, to: slots.length } };
  }
  if (route === "completions") {
    const slots = stringSlots(body.prompt, "prompt");
    return { slots, judged: { from: 0, to: slots.length } };
  }
  if (route === "embeddings") {
    const slots = stringSlots(body.input, "input");
    return { slots, judged: { from: Math.max(0, slots.length - 1), to: slots.length } };
  }
  // The other families: the text a person wrote (an image prompt, text to speak, a query, a transcript's hint).
  const field = MEDIA_INPUT_FIELDS[route];
  if (field) {
    const slots = stringSlots(body[field], field);
    return { slots, judged: { from: 0, to: slots.length } };
  }
  return { slots: [], judged: { from: 0, to: 0 } };
}

const MEDIA_INPUT_FIELDS: Partial<Record<RouteKind, string>> = {
  image_generations: "prompt",
  image_edits: "prompt",
  speech: "input",
  moderations: "input",
  rerank: "query",
  transcriptions: "prompt",
  translations: "prompt",
};

function outputSlots(route: RouteKind, answer: Record<string, unknown>): Found {
  // A transcript's JSON answer holds its text in `text`.
  if ((route === "transcriptions" || route === "translations") && typeof answer.text === "string")
    return { slots: [{ path: ["text"], text: answer.text }], judged: { from: 0, to: 1 } };
  const slots: TextSlot[] = [];
  const choices = Array.isArray(answer.choices) ? answer.choices : [];
  let firstTo = 0;
  choices.forEach((choice, index) => {
    if (!isRecord(choice)) return;
    if (route === "chat" && isRecord(choice.message)) {
      contentSlots(choice.message.content, ["choices", index, "message", "content"], slots);
    } else if (route === "completions" && typeof choice.text === "string") {
      slots.push({ path: ["choices", index, "text"], text: choice.text });
    }
    if (index === 0) firstTo = slots.length;
  });
  return { slots, judged: { from: 0, to: firstTo } };
}

/** A message content: a string, or an array of parts whose `type: "text"` parts hold text. */
function contentSlots(content: unknown, path: PathStep[], slots: TextSlot[]): void {
  if (typeof content === "string") {
    slots.push({ path, text: content });
    return;
  }
  if (!Array.isArray(content)) return;
  content.forEach((part, index) => {
    if (isRecord(part) && part.type === "text" && typeof part.text === "string")
      slots.push({ path: [...path, index, "text"], text: part.text });
  });
}

/** A string, or each string of an array (token arrays are not text). */
function stringSlots(value: unknown, key: string): TextSlot[] {
  if (typeof value === "string") return [{ path: [key], text: value }];
  if (!Array.isArray(value)) return [];
  const slots: TextSlot[] = [];
  value.forEach((item, index) => {
    if (typeof item === "string") slots.push({ path: [key, index], text: item });
  });
  return slots;
}

/**
 * `json` with each changed slot's text replaced, leaving `json` itself untouched: the containers on the path of
 * a change are copied (each once), everything else is shared.
 */
function writeBack(
  json: Record<string, unknown>,
  slots: readonly TextSlot[],
  parts: readonly string[],
): Record<string, unknown> {
  if (parts.length !== slots.length) throw new Error("a rewrite must keep the number of texts");
  const copies = new Map<object, any>();
  const copyOf = (container: any) => {
    let copy = copies.get(container);
    if (!copy) {
      copy = Array.isArray(container) ? [...container] : { ...container };
      copies.set(container, copy);
    }
    return copy;
  };
  const root = copyOf(json);
  slots.forEach((slot, index) => {
    const text = parts[index]!;
    if (text === slot.text) return;
    let original: any = json;
    let copy = root;
    for (const step of slot.path.slice(0, -1)) {
      original = original[step];
      const next = copyOf(original);
      copy[step] = next;
      copy = next;
    }
    copy[slot.path.at(-1)!] = text;
  });
  return root;
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The route whose texts a check's input holds: a pass-through body's by its shape (chat when unsure). */
export function textsRouteOf(input: { route: RouteKind | "passthrough"; request: Record<string, unknown> }): RouteKind {
  return input.route === "passthrough" ? (passthroughRouteOf(input.request) ?? "chat") : input.route;
}
