import { type UpstreamEvent, UpstreamError } from "../types.ts";

/** A framing decoder fed network chunks: each push returns the events those bytes completed. */
export interface EventDecoder {
  push(chunk: Uint8Array): UpstreamEvent[];
  /** End of input: the events still buffered (or a throw when the stream was cut mid-frame). */
  end(): UpstreamEvent[];
}

/**
 * The events of a body, one array per network chunk: a consumer handles (and writes) all the events one read
 * brought at once instead of paying an async step per event.
 */
export async function* eventBatches(
  source: AsyncIterable<Uint8Array>,
  decoder: EventDecoder,
): AsyncIterable<UpstreamEvent[]> {
  for await (const chunk of source) {
    const events = decoder.push(chunk);
    if (events.length > 0) yield events;
  }
  const last = decoder.end();
  if (last.length > 0) yield last;
}

/** One event at a time, for callers that do not care about batches. */
export async function* flattenBatches(batches: AsyncIterable<UpstreamEvent[]>): AsyncIterable<UpstreamEvent> {
  for await (const batch of batches) yield* batch;
}

/**
 * Incremental server-sent-events parser (per the WHATWG event-stream format): handles CRLF/LF/CR line ends,
 * multi-line data, comments, and events split across chunks.
 */
export class SseDecoder implements EventDecoder {
  readonly #text = new TextDecoder();
  #buffer = "";
  #eventName: string | undefined;
  readonly #data: string[] = [];

  push(chunk: Uint8Array): UpstreamEvent[] {
    this.#buffer += this.#text.decode(chunk, { stream: true });
    return this.#lines(false, []);
  }

  end(): UpstreamEvent[] {
    this.#buffer += this.#text.decode();
    const events = this.#lines(true, []);
    // A stream that ends without a blank line still delivers its last event.
    if (this.#buffer) {
      this.#buffer += "\n\n";
      this.#lines(true, events);
    } else if (this.#data.length > 0) {
      events.push(this.#event());
    }
    return events;
  }

  /** The event of the data lines gathered, which are cleared. One line (the usual case) is used as it is. */
  #event(): UpstreamEvent {
    const data = this.#data.length === 1 ? this.#data[0]! : this.#data.join("\n");
    this.#data.length = 0;
    return { event: this.#eventName, data };
  }

  #lines(final: boolean, events: UpstreamEvent[]): UpstreamEvent[] {
    const buffer = this.#buffer;
    // Providers end lines with LF alone: then lines are found by the native indexOf. A CR anywhere in the
    // buffer takes the character scan, which knows CRLF and lone CR.
    const lfOnly = !buffer.includes("\r");
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
      if (lfOnly) {
        end = buffer.indexOf("\n", start);
        next = end + 1;
      } else {
        for (let i = start; i < buffer.length; i++) {
          const char = buffer.charCodeAt(i);
          if (char === 10) {
            end = i;
            next = i + 1;
            break;
          }
          if (char === 13) {
            // A CR at the very end may be the first half of CRLF: wait for more unless this is the end.
            if (i + 1 === buffer.length && !final) break;
            end = i;
            next = buffer.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
            break;
          }
        }
      }
      if (end === -1) break;
      const line = buffer.slice(start, end);
      start = next;
      if (line === "") {
        if (this.#data.length > 0) events.push(this.#event());
        this.#eventName = undefined;
        continue;
      }
      if (line.charCodeAt(0) === 58) continue; // ":" comment
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") this.#data.push(value);
      else if (field === "event") this.#eventName = value;
    }
    this.#buffer = buffer.slice(start);
    return events;
  }
}

/** Newline-delimited JSON (one event per non-empty line). */
export class NdjsonDecoder implements EventDecoder {
  readonly #text = new TextDecoder();
  #buffer = "";

  push(chunk: Uint8Array): UpstreamEvent[] {
    this.#buffer += this.#text.decode(chunk, { stream: true });
    const events: UpstreamEvent[] = [];
    let newline = this.#buffer.indexOf("\n");
    while (newline !== -1) {
      const line = this.#buffer.slice(0, newline).trim();
      this.#buffer = this.#buffer.slice(newline + 1);
      if (line) events.push({ data: line });
      newline = this.#buffer.indexOf("\n");
    }
    return events;
  }

  end(): UpstreamEvent[] {
    const rest = (this.#buffer + this.#text.decode()).trim();
    this.#buffer = "";
    return rest ? [{ data: rest }] : [];
  }
}

export const decodeSse = (source: AsyncIterable<Uint8Array>): AsyncIterable<UpstreamEvent> =>
  flattenBatches(eventBatches(source, new SseDecoder()));

export const decodeNdjson = (source: AsyncIterable<Uint8Array>): AsyncIterable<UpstreamEvent> =>
  flattenBatches(eventBatches(source, new NdjsonDecoder()));

/**
 * An SSE event's JSON data, or undefined for an empty event or `[DONE]`; data that is not JSON is a 502 naming
 * `provider` (a chat stream transformer's first step).
 */
export function eventJson(provider: string, event: UpstreamEvent): any {
  if (!event.data || event.data === "[DONE]") return undefined;
  try {
    return JSON.parse(event.data);
  } catch {
    throw new UpstreamError(502, `${provider} sent an unreadable stream event: ${event.data.slice(0, 200)}`, {
      type: "server_error",
    });
  }
}
