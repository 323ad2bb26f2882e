/**
 * The iteration half of the Web `Headers` API over entries a subclass lists (sorted by name, as `Headers`
 * iterates), for the local server's cheap views of request and response headers (node-headers.ts,
 * light-response.ts). `instanceof Headers` holds for them, so code that checks for a Headers object takes
 * them as one.
 */
export abstract class HeadersView {
  /** Every entry, sorted by name; each Set-Cookie value on its own. */
  protected abstract entryList(): Array<[string, string]>;

  forEach(callback: (value: string, name: string, parent: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entryList()) callback.call(thisArg, value, name, this as unknown as Headers);
  }

  entries(): ArrayIterator<[string, string]> {
    return this.entryList()[Symbol.iterator]();
  }

  keys(): ArrayIterator<string> {
    return this.entryList()
      .map(([name]) => name)
      [Symbol.iterator]();
  }

  values(): ArrayIterator<string> {
    return this.entryList()
      .map(([, value]) => value)
      [Symbol.iterator]();
  }

  [Symbol.iterator](): ArrayIterator<[string, string]> {
    return this.entries();
  }
}

Object.setPrototypeOf(HeadersView.prototype, Headers.prototype);
