import type { UpstreamEvent } from "../types.ts";

/**
 * Incremental server-sent-events parser (per the WHATWG event-stream format): handles CRLF/LF/CR line ends,
 * multi-line data, comments, and events split across chunks. Yields one UpstreamEvent per dispatched event.
 */
export async function* decodeSse(source: AsyncIterable<Uint8Array>): AsyncIterable<UpstreamEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let eventName: string | undefined;
  let data: string[] = [];

  function* processLines(final: boolean): Generator<UpstreamEvent> {
    let start = 0;
    for (;;) {
      let end = -1;
      let next = -1;
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
      if (end === -1) break;
      const line = buffer.slice(start, end);
      start = next;
      if (line === "") {
        if (data.length > 0) yield { event: eventName, data: data.join("\n") };
        eventName = undefined;
        data = [];
        continue;
      }
      if (line.charCodeAt(0) === 58) continue; // ":" comment
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.charCodeAt(0) === 32) value = value.slice(1);
      if (field === "data") data.push(value);
      else if (field === "event") eventName = value;
    }
    buffer = buffer.slice(start);
  }

  for await (const chunk of source) {
    buffer += decoder.decode(chunk, { stream: true });
    yield* processLines(false);
  }
  buffer += decoder.decode();
  yield* processLines(true);
  // A stream that ends without a blank line still delivers its last event.
  if (buffer) {
    buffer += "\n\n";
    yield* processLines(true);
  } else if (data.length > 0) {
    yield { event: eventName, data: data.join("\n") };
  }
}

/** Newline-delimited JSON (one event per non-empty line). */
export async function* decodeNdjson(source: AsyncIterable<Uint8Array>): AsyncIterable<UpstreamEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of source) {
    buffer += decoder.decode(chunk, { stream: true });
    let newline = buffer.indexOf("\n");
    while (newline !== -1) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) yield { data: line };
      newline = buffer.indexOf("\n");
    }
  }
  const rest = (buffer + decoder.decode()).trim();
  if (rest) yield { data: rest };
}
