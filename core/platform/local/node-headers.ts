import type { IncomingHttpHeaders } from "node:http";
import { HeadersView } from "./headers-view.ts";

/**
 * The request headers node:http already parsed (lower-case names, repeated headers joined), read through the
 * Web `Headers` API: what the local server gives handlers as `request.headers`. A `Headers` built from them
 * validates, copies and sorts every header, and the data plane reads a handful of them and iterates them once
 * (for the log): that copy, and its garbage, are measurable per request. Read-only, as an incoming request's
 * headers are.
 */
export class NodeHeaders extends HeadersView {
  readonly #raw: IncomingHttpHeaders;
  #entries: Array<[string, string]> | undefined;

  constructor(raw: IncomingHttpHeaders) {
    super();
    this.#raw = raw;
  }

  get(name: string): string | null {
    const value = this.#lookup(name);
    if (value === undefined) return null;
    return Array.isArray(value) ? value.join(", ") : value;
  }

  has(name: string): boolean {
    return this.#lookup(name) !== undefined;
  }

  getSetCookie(): string[] {
    return [];
  }

  set(): void {
    throw new TypeError("The headers of an incoming request are immutable.");
  }

  append(): void {
    throw new TypeError("The headers of an incoming request are immutable.");
  }

  delete(): void {
    throw new TypeError("The headers of an incoming request are immutable.");
  }

  /**
   * Own properties only: Node's headers object inherits Object.prototype, and names come from clients
   * (`x-gateway-forward-headers`), so `constructor` or `__proto__` must find nothing. The gateway asks in lower
   * case; only other callers pay for the conversion.
   */
  #lookup(name: string): string | string[] | undefined {
    const raw = this.#raw;
    if (Object.hasOwn(raw, name)) return raw[name];
    const lower = name.toLowerCase();
    return lower !== name && Object.hasOwn(raw, lower) ? raw[lower] : undefined;
  }

  /**
   * Sorted by name, as `Headers` iterates; listed once (the headers cannot change), as a request's are iterated
   * twice: for its gateway headers and for its log.
   */
  protected entryList(): Array<[string, string]> {
    this.#entries ??= this.#listEntries();
    return this.#entries;
  }

  #listEntries(): Array<[string, string]> {
    const entries: Array<[string, string]> = [];
    for (const name of Object.keys(this.#raw).sort()) {
      const value = this.#raw[name];
      if (value !== undefined && name !== "set-cookie") {
        entries.push([name, Array.isArray(value) ? value.join(", ") : value]);
      }
    }
    return entries;
  }
}

/** The request as handlers see it, with `headers` read from node's parsed ones (see above). */
export function withNodeHeaders(request: Request, raw: IncomingHttpHeaders): Request {
  Object.defineProperty(request, "headers", { value: new NodeHeaders(raw) });
  return request;
}
