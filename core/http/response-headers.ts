/**
 * Responses the gateway builds itself remember their parts (body, status, headers as a plain record) so that
 * adding headers later (routing headers, the trace id) builds a new Response from the parts instead of
 * reading `response.headers`: that materialises a WHATWG Headers object, which the local server then turns
 * back into a record for node:http: two conversions per request for nothing. Any Response still works:
 * without parts, headers are set on `response.headers` (copied first when they are immutable).
 *
 * So headers of a response are changed only through `withHeaders`: a change made on `response.headers` of a
 * gateway-built response would not reach the local server, which writes the parts
 * (test/unit/http/response-headers.test.ts checks that nothing in core/ does that).
 */
const PARTS = Symbol("gateway.responseParts");

/** Where a streamed answer's source is attached (sse-source.ts): it goes along to copies. */
export const SSE_SOURCE = Symbol.for("gateway.sseSource");

interface ResponseParts {
  body: BodyInit | null;
  status: number;
  headers: Record<string, string>;
}

/** A Response that keeps its parts (see above). Header names are lowercase. */
export function gatewayResponse(body: BodyInit | null, status: number, headers: Record<string, string>): Response {
  const response = new Response(body, { status, headers });
  (response as unknown as Record<symbol, ResponseParts>)[PARTS] = { body, status, headers };
  return response;
}

function partsOf(response: Response): ResponseParts | undefined {
  return (response as unknown as Record<symbol, ResponseParts | undefined>)[PARTS];
}

/** The headers of a gateway-built response as a plain record (do not modify), if it is one. */
export function plainHeadersOf(response: Response): Readonly<Record<string, string>> | undefined {
  return partsOf(response)?.headers;
}

/** Adds or replaces headers (lowercase names): a new Response from the parts, or set in place, or on a copy. */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  const parts = partsOf(response);
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
  // A streamed answer's source goes along: the server may still write from it.
  const source = (response as unknown as Record<symbol, unknown>)[SSE_SOURCE];
  if (source !== undefined) (result as unknown as Record<symbol, unknown>)[SSE_SOURCE] = source;
  return result;
}
