/**
 * Responses the gateway builds itself remember their parts (body, status, headers as a plain record) so that
 * adding headers later (routing headers, the trace id) builds a new Response from the parts instead of
 * reading `response.headers`: that materialises a WHATWG Headers object, which the local server then turns
 * back into a record for node:http (about 30 µs per request together, measured). Any Response still works:
 * without parts, headers are set on `response.headers` (copied first when they are immutable).
 */
const PARTS = Symbol.for("gateway.responseParts");

interface ResponseParts {
  body: BodyInit | null;
  status: number;
  headers: Record<string, string>;
  /** False once someone read `response.headers` (and may have changed them there): the parts are stale. */
  live: boolean;
}

/** A Response that keeps its parts (see above). Headers are lowercase names. */
export function gatewayResponse(body: BodyInit | null, status: number, headers: Record<string, string>): Response {
  const response = new Response(body, { status, headers });
  const parts: ResponseParts = { body, status, headers, live: true };
  (response as unknown as Record<symbol, ResponseParts>)[PARTS] = parts;
  // Reading `headers` hands out the Response's own Headers, which may then be changed: from then on they are
  // the truth, and the parts are no longer used.
  Object.defineProperty(response, "headers", {
    configurable: true,
    get() {
      parts.live = false;
      const real = Reflect.get(Object.getPrototypeOf(response), "headers", response) as Headers;
      Object.defineProperty(response, "headers", { value: real, configurable: true });
      return real;
    },
  });
  return response;
}

function livePartsOf(response: Response): ResponseParts | undefined {
  const parts = (response as unknown as Record<symbol, ResponseParts | undefined>)[PARTS];
  return parts?.live ? parts : undefined;
}

/** The headers of a gateway-built response as a plain record (do not modify), while they are its headers. */
export function plainHeadersOf(response: Response): Readonly<Record<string, string>> | undefined {
  return livePartsOf(response)?.headers;
}

/** Adds or replaces headers (lowercase names): a new Response from the parts, or set in place, or on a copy. */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const parts = livePartsOf(response);
  let result: Response;
  if (parts) {
    result = gatewayResponse(parts.body, parts.status, { ...parts.headers, ...headers });
  } else {
    try {
      for (const name in headers) response.headers.set(name, headers[name]!);
      return response;
    } catch {
      // Headers of some responses (e.g. from fetch) are immutable: copy them once.
      const copy = new Headers(response.headers);
      for (const name in headers) copy.set(name, headers[name]!);
      result = new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy });
    }
  }
  carryAttachments(response, result);
  return result;
}

/**
 * What the gateway attached to a response under `Symbol.for("gateway.…")` keys (a streamed answer's source,
 * sse-source.ts) goes along to its copy: the server may still write from it.
 */
function carryAttachments(from: Response, to: Response): void {
  for (const key of Object.getOwnPropertySymbols(from)) {
    if (key === PARTS || !Symbol.keyFor(key)?.startsWith("gateway.")) continue;
    Object.defineProperty(to, key, { value: (from as unknown as Record<symbol, unknown>)[key], configurable: true });
  }
}
