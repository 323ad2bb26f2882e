/**
 * Adds or replaces headers (lowercase names) of a response: in place when its headers may change (every
 * Response the gateway builds), else on a copy (e.g. a Response from fetch, whose headers are immutable).
 * Changing them in place keeps the Response itself, so whatever a host knows about it (sse-source.ts) holds.
 */
export function withHeaders(response: Response, headers: Record<string, string>): Response {
  try {
    for (const name in headers) response.headers.set(name, headers[name]!);
    return response;
  } catch {
    const copy = new Headers(response.headers);
    for (const name in headers) copy.set(name, headers[name]!);
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: copy });
  }
}
