/**
 * Gateway request headers come as `x-gateway-<name>`; the Portkey SDK sends the same headers as
 * `x-portkey-<name>`, accepted as aliases so that SDK works unmodified.
 */
export function gatewayHeader(headers: Headers, name: string): string | null {
  return headers.get(`x-gateway-${name}`) ?? headers.get(`x-portkey-${name}`);
}

export const TRACE_ID_HEADER = "x-gateway-trace-id";
const TRACE_ID_PATTERN = /^[\w.:@/+=-]{1,128}$/;

/** The caller's trace id when it is a sane token, else a new one. */
export function traceIdOf(headers: Headers): string {
  const given = gatewayHeader(headers, "trace-id");
  return given && TRACE_ID_PATTERN.test(given) ? given : crypto.randomUUID();
}
