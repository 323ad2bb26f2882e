/**
 * A deferred log body: one whose JSON is costly to produce and not needed before the log is stored, such as a
 * streamed answer still to be assembled from its chunks. `toJSON()` produces the plain value. Every LogSink
 * takes them (LogSink, core/store/ports.ts): the AWS sink resolves them on the event loop; the local one sends `late` to its
 * storage thread, which produces the JSON there.
 */
export interface LateJson {
  toJSON(): unknown;
  /** What another thread needs to produce the value: plain data (structured-cloneable) and its kind. */
  readonly late: LatePayload;
}

/** The kinds of late values, and the data each is made from. */
export type LatePayload =
  | { kind: "sse-transcript"; route: "chat" | "text"; chunks: readonly Uint8Array[] }
  | { kind: "json-text"; text: string };

/**
 * A body whose JSON text is at hand (an answer that passed through as the provider's bytes): the local storage
 * thread writes the text itself instead of the event loop serialising the value again.
 */
export class JsonText implements LateJson {
  readonly late: LatePayload;
  readonly #value: unknown;

  /** `text` must be `value`'s JSON (the text it was parsed from). */
  constructor(text: string, value: unknown) {
    this.late = { kind: "json-text", text };
    this.#value = value;
  }

  toJSON(): unknown {
    return this.#value;
  }
}

export function isLateJson(value: unknown): value is LateJson {
  return (
    typeof value === "object" && value !== null && "late" in value && typeof (value as LateJson).toJSON === "function"
  );
}
