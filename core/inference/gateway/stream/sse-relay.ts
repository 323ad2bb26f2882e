import { SseDecoder } from "../../../providers/stream/sse.ts";
import type { ChatUsage } from "../../../providers/types.ts";
import type { Transcript } from "./transcript.ts";
import type { BatchDecoder } from "./upstream-events.ts";

const LF = 10;
const CR = 13;
const LFLF = Buffer.from("\n\n");
/** The keys searched for, as JSON writes them compact, or with a space after the colon (Python's default). */
const COMPACT_KEYS = { usage: Buffer.from('"usage":{'), model: Buffer.from('"model":"') };
const SPACED_KEYS = { usage: Buffer.from('"usage": {'), model: Buffer.from('"model": "') };
const MAX_MODEL_LOOKUPS = 4;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const DATA_FIELD = Buffer.from("data: ");
const DONE_DATA = "[DONE]";
const DONE_EVENT = Buffer.from("data: [DONE]\n\n");

/**
 * Relays a provider's SSE body that already is OpenAI's chat or completions chunks (OpenAI and the
 * compatible providers) to the client as the provider's own bytes: whole events, cut only at event ends,
 * never decoded, split into events and encoded again. The relay reads only what the gateway needs:
 *
 * - the first event with data (nothing is released before it, so a stream that fails before its first chunk
 *   can still fall back), and whether the provider writes JSON compact or with a space after colons;
 * - the answering model: the first non-empty `"model"` string value;
 * - the events that carry a usage object, found by a byte search for `"usage":{` (`"usage": {` for spaced
 *   JSON) and parsed whole: the usage is noted, and the usage-only chunk (no choices) the gateway asked for on the
 *   client's behalf is cut out when the client did not ask for it;
 * - whether the provider sent `[DONE]` (the relay adds it at the end otherwise, as OpenAI always sends it).
 *
 * Every event (the hidden one too) goes to `transcript` for the request log, which assembles the answer
 * later (stream-transcript.ts), not on the event loop's way to the client. `push` returns the bytes to send
 * for a network chunk (usually the chunk itself, or views of it), or undefined while no whole event is there.
 */
export class SseRelay implements BatchDecoder<Uint8Array[]> {
  /** Bytes seen but not released: an event not finished yet, or everything before the first data event. */
  #carry: Buffer | undefined;
  /** A CR seen anywhere: event ends are then found by the byte scan that knows CRLF and lone CR. */
  #crSeen = false;
  #dataSeen = false;
  #doneSent = false;
  readonly #hideUsageOnly: boolean;
  /** The model that answered, as the chunks name it. */
  model: string | undefined;
  /** Chunks looked at for a model so far (Azure's first chunk names none): the search stops after a few. */
  #modelLookups = 0;
  #keys = COMPACT_KEYS;
  /** The usage the provider reported (the last one seen). */
  usage: ChatUsage | undefined;
  /** Every event released, in order, the hidden usage chunk included: for the request log. */
  readonly transcript: Transcript;
  /** Bytes released. */
  bytes = 0;
  /** The first event with data is a JSON object (a chunk): a body without one is not an answer. */
  firstChunkValid = false;

  readonly #withCost: ((chunk: Record<string, any>) => object) | undefined;

  /**
   * `hideUsageOnly`: cut out the usage-only chunk (the client did not ask for `include_usage`). `withCost`: the
   * chunk that carries usage as the client gets it (its cost added): that one event is written anew.
   */
  constructor(options: {
    hideUsageOnly: boolean;
    transcript: Transcript;
    withCost?: (chunk: Record<string, any>) => object;
  }) {
    this.#hideUsageOnly = options.hideUsageOnly;
    this.transcript = options.transcript;
    this.#withCost = options.withCost;
  }

  push(chunk: Uint8Array): Uint8Array[] | undefined {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (!this.#crSeen && buffer.indexOf(CR) !== -1) this.#crSeen = true;
    const bytes = this.#carry ? Buffer.concat([this.#carry, buffer]) : buffer;
    const end = this.#lastEventEnd(bytes);
    if (end === -1 || (!this.#dataSeen && !this.#findFirstData(bytes, end))) {
      this.#carry = bytes;
      return undefined;
    }
    this.#carry = end < bytes.length ? bytes.subarray(end) : undefined;
    return this.#release(end === bytes.length ? bytes : bytes.subarray(0, end));
  }

  end(): Uint8Array[] | undefined {
    let pieces: Uint8Array[] = [];
    const rest = this.#carry;
    this.#carry = undefined;
    if (rest && rest.length > 0) {
      // A body that ends without a blank line still delivers its last event (as SseDecoder does).
      const closed = Buffer.concat([rest, rest[rest.length - 1] === LF ? Buffer.from("\n") : LFLF]);
      if (!this.#dataSeen) this.#findFirstData(closed, closed.length);
      pieces = this.#release(closed);
    }
    if (!this.#doneSent) pieces.push(DONE_EVENT);
    return pieces.length > 0 ? pieces : undefined;
  }

  /** Releases whole events: kept for the transcript, scanned for usage and [DONE]; returns what to send. */
  #release(events: Buffer): Uint8Array[] {
    this.transcript.add(events);
    this.bytes += events.length;
    if (!this.#doneSent) this.#doneSent = this.#hasDone(events);
    const pieces: Uint8Array[] = [];
    let sent = 0;
    let scanned = 0;
    if (this.model === undefined && this.#modelLookups < MAX_MODEL_LOOKUPS) this.#findModel(events);
    const usageKey = this.#keys.usage;
    for (let at = events.indexOf(usageKey); at !== -1; at = events.indexOf(usageKey, scanned)) {
      const [start, end] = this.#eventAround(events, at);
      scanned = end;
      const chunk = parseJson(eventData(events, start, end));
      if (chunk?.usage === null || typeof chunk?.usage !== "object") continue;
      this.usage = chunk.usage;
      if (this.#hideUsageOnly && Array.isArray(chunk.choices) && chunk.choices.length === 0) {
        if (start > sent) pieces.push(events.subarray(sent, start));
        sent = end;
      } else if (this.#withCost) {
        if (start > sent) pieces.push(events.subarray(sent, start));
        pieces.push(Buffer.from(`data: ${JSON.stringify(this.#withCost(chunk))}\n\n`));
        sent = end;
      }
    }
    if (sent === 0) pieces.push(events);
    else if (sent < events.length) pieces.push(events.subarray(sent));
    return pieces;
  }

  /** The first non-empty `"model"` string of these events (a key found by bytes: never inside a string). */
  #findModel(events: Buffer): void {
    const key = this.#keys.model;
    for (
      let at = events.indexOf(key);
      at !== -1 && this.#modelLookups < MAX_MODEL_LOOKUPS;
      at = events.indexOf(key, at + 1)
    ) {
      this.#modelLookups++;
      const start = at + key.length;
      const end = stringEnd(events, start);
      if (end === -1 || end === start) continue;
      const raw = events.toString("utf8", start, end);
      this.model = raw.includes("\\") ? (parseJson(`{"m":"${raw}"}`)?.m as string | undefined) : raw;
      if (this.model) return;
    }
  }

  /** Finds the first event with data in bytes[0, end) and parses it; false when there is none yet. */
  #findFirstData(bytes: Buffer, end: number): boolean {
    for (let start = 0; start < end; ) {
      const next = this.#nextEventEnd(bytes, start);
      const data = eventData(bytes, start, next);
      if (data !== undefined) {
        this.#dataSeen = true;
        this.firstChunkValid = parseJson(data) !== undefined;
        // Keys end with `":`; what follows the first one shows the provider's JSON style.
        if (data.charCodeAt(data.indexOf('":') + 2) === 0x20) this.#keys = SPACED_KEYS;
        return true;
      }
      start = next;
    }
    return false;
  }

  /** Whether one of these events is `data: [DONE]` (the text can also be inside a chunk's content). */
  #hasDone(events: Buffer): boolean {
    // Where it always is: the last event.
    if (endsWith(events, DONE_EVENT)) return true;
    for (let at = events.indexOf(DONE_DATA); at !== -1; at = events.indexOf(DONE_DATA, at + DONE_DATA.length)) {
      const [start, end] = this.#eventAround(events, at);
      if (eventData(events, start, end) === DONE_DATA) return true;
    }
    return false;
  }

  /** The index just past the last blank line in bytes (the end of its last whole event), or -1. */
  #lastEventEnd(bytes: Buffer): number {
    if (!this.#crSeen) {
      const at = bytes.lastIndexOf(LFLF);
      return at === -1 ? -1 : at + 2;
    }
    let last = -1;
    for (let start = 0; ; ) {
      const next = crAwareEventEnd(bytes, start);
      if (next === -1) return last;
      last = start = next;
    }
  }

  /** The end of the event starting at `start` (bytes hold whole events from there). */
  #nextEventEnd(bytes: Buffer, start: number): number {
    if (!this.#crSeen) {
      const at = bytes.indexOf(LFLF, start);
      return at === -1 ? bytes.length : at + 2;
    }
    const next = crAwareEventEnd(bytes, start);
    return next === -1 ? bytes.length : next;
  }

  /** [start, end) of the whole event that contains index `at`. */
  #eventAround(events: Buffer, at: number): [number, number] {
    if (!this.#crSeen) {
      const before = events.lastIndexOf(LFLF, at);
      return [before === -1 ? 0 : before + 2, this.#nextEventEnd(events, at)];
    }
    let start = 0;
    for (;;) {
      const next = this.#nextEventEnd(events, start);
      if (next > at) return [start, next];
      start = next;
    }
  }
}

/**
 * The index just past the blank line that ends the event starting at `start`, with LF, CRLF or CR line ends;
 * -1 when there is none yet (a CR at the very end may be half of a CRLF).
 */
function crAwareEventEnd(bytes: Uint8Array, start: number): number {
  let lineStart = start;
  for (let i = start; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte !== LF && byte !== CR) continue;
    let next = i + 1;
    if (byte === CR) {
      if (next === bytes.length) return -1;
      if (bytes[next] === LF) next++;
    }
    if (i === lineStart) return next;
    lineStart = next;
    i = next - 1;
  }
  return -1;
}

/** The index of the quote that ends the JSON string whose text starts at `start`, or -1. */
function stringEnd(bytes: Buffer, start: number): number {
  for (let at = bytes.indexOf(QUOTE, start); at !== -1; at = bytes.indexOf(QUOTE, at + 1)) {
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
  return -1;
}

/**
 * The data of the whole event bytes[start, end) (its data lines joined), or undefined for an event without
 * data. The usual event, one `data: ` line ended by a blank line of LFs, is read without a decoder.
 */
function eventData(bytes: Buffer, start: number, end: number): string | undefined {
  const valueStart = start + DATA_FIELD.length;
  if (
    end - valueStart >= 2 &&
    bytes[end - 1] === LF &&
    bytes[end - 2] === LF &&
    bytes.indexOf(LF, valueStart) === end - 2 &&
    bytes.indexOf(CR, valueStart) === -1 &&
    startsWith(bytes, start, DATA_FIELD)
  ) {
    return bytes.toString("utf8", valueStart, end - 2);
  }
  const decoder = new SseDecoder();
  const events = decoder.push(bytes.subarray(start, end));
  events.push(...decoder.end());
  return events[0]?.data;
}

function startsWith(bytes: Buffer, at: number, prefix: Buffer): boolean {
  if (at + prefix.length > bytes.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[at + i] !== prefix[i]) return false;
  return true;
}

function endsWith(bytes: Buffer, suffix: Buffer): boolean {
  return startsWith(bytes, bytes.length - suffix.length, suffix);
}

function parseJson(text: string | undefined): Record<string, any> | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
