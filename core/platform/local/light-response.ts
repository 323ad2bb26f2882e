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

/** What a fetch Response answers to a second read of its body. */
const bodyUnusable = (): Promise<never> =>
  Promise.reject(new TypeError("Body is unusable: Body has already been read"));

/** The body of a response whose body was read: a stream that is disturbed and has nothing left, as fetch's is. */
function usedBody(): ReadableStream<Uint8Array<ArrayBuffer>> {
  const stream = new ReadableStream<Uint8Array<ArrayBuffer>>();
  void stream.cancel();
  return stream;
}

/**
 * Installs, over the adapter's global Response (call after getRequestListener replaced it), one whose record
 * headers are kept as a RecordHeaders. Idempotent.
 */
export function installLightResponse(): void {
  const Lightweight = globalThis.Response as typeof Response & { [installed]?: true };
  if (Lightweight[installed]) return;
  class LightResponse extends Lightweight {
    static [installed] = true as const;
    /** A string body not read yet: text() and json() answer it as it is. */
    #text: string | undefined;
    /** Whether text() or json() read the string body. */
    #read = false;

    constructor(body?: BodyInit | null, init?: ResponseInit) {
      const headers = init?.headers;
      // A copy: the caller's record may be shared (a constant), and headers are changed on the answer.
      super(
        body,
        isLowerCaseRecord(headers)
          ? { ...init, headers: new RecordHeaders({ ...headers }) as unknown as Headers }
          : init,
      );
      if (typeof body === "string") this.#text = body;
    }

    // Reading a string body: the adapter's text() builds the fetch Response behind the lightweight one (its
    // headers copied into a Headers, the string through a web stream) to read back the string it was given; a
    // Responses answer the gateway translated is read so, and that was about a tenth of its CPU. Once read, the
    // body is used, as a fetch Response's is: reading it again fails.
    text(): Promise<string> {
      const text = this.#text;
      if (text === undefined) return this.#read ? bodyUnusable() : super.text();
      this.#text = undefined;
      this.#read = true;
      return Promise.resolve(text);
    }

    json(): Promise<any> {
      return this.#text === undefined ? (this.#read ? bodyUnusable() : super.json()) : this.text().then(JSON.parse);
    }

    get bodyUsed(): boolean {
      return this.#read || (this.#text === undefined && super.bodyUsed);
    }

    get body(): ReadableStream<Uint8Array<ArrayBuffer>> | null {
      return this.#read ? usedBody() : super.body;
    }

    arrayBuffer(): Promise<ArrayBuffer> {
      return this.#read ? bodyUnusable() : super.arrayBuffer();
    }

    blob(): Promise<Blob> {
      return this.#read ? bodyUnusable() : super.blob();
    }

    formData(): Promise<FormData> {
      return this.#read ? bodyUnusable() : super.formData();
    }

    clone(): Response {
      if (this.#read) throw new TypeError("Response.clone: Body has already been consumed.");
      return super.clone();
    }
  }
  Object.defineProperty(globalThis, "Response", { value: LightResponse, writable: true, configurable: true });
}
