import type { IncomingHttpHeaders } from "node:http";

/** What the gateway reads from request headers: a subset of the Web `Headers` API (which satisfies it). */
export interface HeaderSource extends Iterable<[string, string]> {
  get(name: string): string | null;
  has(name: string): boolean;
}

/**
 * Node's parsed request headers (lower-case names, repeated headers already joined) behind the HeaderSource
 * interface. The Web `Headers` object the HTTP adapter would otherwise build validates, copies and sorts every
 * header: measurable on the data plane, which reads a handful of them.
 */
export class NodeHeaders implements HeaderSource {
  readonly #raw: IncomingHttpHeaders;

  constructor(raw: IncomingHttpHeaders) {
    this.#raw = raw;
  }

  get(name: string): string | null {
    // The gateway asks in lower case; only other callers pay for the conversion.
    const value = this.#raw[name] ?? this.#raw[name.toLowerCase()];
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }

  has(name: string): boolean {
    return (this.#raw[name] ?? this.#raw[name.toLowerCase()]) !== undefined;
  }

  [Symbol.iterator](): Iterator<[string, string]> {
    // An array's iterator: cheaper than a generator, and the headers are read whole at most twice a request.
    const entries: Array<[string, string]> = [];
    for (const name in this.#raw) {
      const value = this.#raw[name];
      if (value !== undefined) entries.push([name, Array.isArray(value) ? value.join(", ") : value]);
    }
    return entries[Symbol.iterator]();
  }
}

/** The headers of a request as the handlers read them: the platform's cheap view when it gave one. */
export function headersOf(request: Request, ctx: { headers?: HeaderSource }): HeaderSource {
  return ctx.headers ?? request.headers;
}
