/**
 * The local server's Response: @hono/node-server's lightweight Response (it keeps status, body and headers
 * init, and writes a string body straight to the socket), with the headers given as a plain record kept as
 * that record behind the Web `Headers` API. Handlers add headers to every answer (routing headers, the trace
 * id) through `response.headers`; the adapter's own Response then builds a `Headers` (validating, copying and
 * sorting every header) and turns it back into a record for node:http. Installed as the global Response by
 * the local server only; the core builds plain `new Response(body, { headers })` either way.
 */

import { HeadersView } from "./headers-view.ts";

/**
 * A Headers view over a plain record of lower-case names (what `new Response(body, { headers: {...} })` gave).
 * Being `instanceof Headers`, the adapter reads it as it is instead of building a Headers from the record.
 */
export class RecordHeaders extends HeadersView {
  readonly #record: Record<string, string>;
  /** Set-Cookie values after the first (which is in the record). */
  readonly #cookies: string[] = [];

  constructor(record: Record<string, string>) {
    super();
    this.#record = record;
  }

  get(name: string): string | null {
    return this.#record[name.toLowerCase()] ?? null;
  }

  has(name: string): boolean {
    return Object.hasOwn(this.#record, name.toLowerCase());
  }

  set(name: string, value: string): void {
    const lower = checkedName(name);
    this.#record[lower] = checkedValue(value);
  }

  append(name: string, value: string): void {
    const lower = checkedName(name);
    const previous = this.#record[lower];
    if (lower === "set-cookie" && previous !== undefined) {
      // Cookies are never joined: the later ones wait beside the record.
      this.#cookies.push(checkedValue(value));
      return;
    }
    this.#record[lower] = previous === undefined ? checkedValue(value) : `${previous}, ${checkedValue(value)}`;
  }

  delete(name: string): void {
    const lower = name.toLowerCase();
    delete this.#record[lower];
    if (lower === "set-cookie") this.#cookies.length = 0;
  }

  getSetCookie(): string[] {
    const cookie = this.#record["set-cookie"];
    return cookie === undefined ? [] : [cookie, ...this.#cookies];
  }

  /** Sorted by name, as `Headers` iterates (each cookie on its own). */
  protected entryList(): Array<[string, string]> {
    const entries: Array<[string, string]> = [];
    for (const name of Object.keys(this.#record).sort()) {
      if (name === "set-cookie") for (const cookie of this.getSetCookie()) entries.push([name, cookie]);
      else entries.push([name, this.#record[name]!]);
    }
    return entries;
  }
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FORBIDDEN_VALUE = /[\0\r\n]/;

function checkedName(name: string): string {
  if (!TOKEN.test(name)) throw new TypeError(`Invalid header name: ${name}`);
  return name.toLowerCase();
}

function checkedValue(value: string): string {
  const trimmed = String(value).trim();
  if (FORBIDDEN_VALUE.test(trimmed)) throw new TypeError("Invalid header value");
  return trimmed;
}

/** Plain records with lower-case names only (what the gateway builds); anything else goes to the adapter as it is. */
function isLowerCaseRecord(headers: unknown): headers is Record<string, string> {
  if (headers === null || typeof headers !== "object" || Object.getPrototypeOf(headers) !== Object.prototype) {
    return false;
  }
  for (const name in headers) {
    const value = (headers as Record<string, unknown>)[name];
    if (typeof value !== "string" || name !== name.toLowerCase() || !TOKEN.test(name) || FORBIDDEN_VALUE.test(value)) {
      return false;
    }
  }
  return true;
}

const installed = Symbol("lightResponse");

/**
 * Installs, over the adapter's global Response (call after getRequestListener replaced it), one whose record
 * headers are kept as a RecordHeaders. Idempotent.
 */
export function installLightResponse(): void {
  const Lightweight = globalThis.Response as typeof Response & { [installed]?: true };
  if (Lightweight[installed]) return;
  class LightResponse extends Lightweight {
    static [installed] = true as const;
    constructor(body?: BodyInit | null, init?: ResponseInit) {
      const headers = init?.headers;
      // A copy: the caller's record may be shared (a constant), and headers are changed on the answer.
      super(
        body,
        isLowerCaseRecord(headers)
          ? { ...init, headers: new RecordHeaders({ ...headers }) as unknown as Headers }
          : init,
      );
    }
  }
  Object.defineProperty(globalThis, "Response", { value: LightResponse, writable: true, configurable: true });
}
