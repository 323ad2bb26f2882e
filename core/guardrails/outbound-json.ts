import { requestUpstream } from "../gateway/upstream/client.ts";
import type { UpstreamRequest } from "../providers/types.ts";
import { type TrustedHosts, checkCustomHostSyntax, checkedCustomHostBase } from "../security/custom-host.ts";
import { withinJsonDepth } from "../util/json-depth.ts";

/**
 * The JSON calls a check makes beyond the gateway (a webhook, a JWKS): under the custom-host rules (http or
 * https, no credentials or fragment in the URL, no private, reserved or metadata address unless
 * TRUSTED_CUSTOM_HOSTS admits it, checked again at connect time by the guarded dispatcher, so DNS rebinding
 * cannot reach one), through the gateway's upstream client, within the check's time limit. Only the check's
 * own headers are sent, and of those none named like a credential; the request's headers never. Answers
 * over MAX_ANSWER_BYTES are refused; redirects are not followed. Errors name the origin only: a URL's path
 * or query may hold a token.
 */

export const MAX_ANSWER_BYTES = 1024 * 1024;

export interface JsonAnswer {
  status: number;
  /** The parsed body; undefined when it is empty or not JSON. */
  json: unknown;
}

export async function outboundJson(
  trusted: TrustedHosts,
  call: {
    method: "GET" | "POST";
    url: string;
    body?: unknown;
    headers?: Record<string, string>;
    timeoutMs: number;
    signal: AbortSignal;
  },
): Promise<JsonAnswer> {
  const url = await checkedUrl(call.url, trusted);
  const headers: Record<string, string> = { ...checkHeaders(call.headers ?? {}), accept: "application/json" };
  const request: UpstreamRequest = { url: url.href, method: call.method, headers };
  if (call.method === "POST") {
    headers["content-type"] = "application/json";
    request.body = JSON.stringify(call.body ?? null);
  }
  const failed = (why: string) => new Error(`the call to ${url.origin} failed: ${why}`);
  let reply: Awaited<ReturnType<typeof requestUpstream>>;
  try {
    reply = await requestUpstream(request, { timeoutMs: call.timeoutMs, signal: call.signal, trusted });
  } catch (error) {
    throw failed((error as Error).message);
  }
  if (reply.status >= 300 && reply.status < 400) {
    await reply.discard();
    throw failed(`it answered with a redirect (${reply.status}), which is not followed`);
  }
  let text: string;
  try {
    text = await reply.text(MAX_ANSWER_BYTES);
  } catch (error) {
    throw failed((error as Error).message);
  }
  return { status: reply.status, json: parsedJson(text) };
}

/** The URL under the custom-host rules: syntax for the whole URL, addresses for its origin (cached briefly). */
async function checkedUrl(value: string, trusted: TrustedHosts): Promise<URL> {
  try {
    const url = checkCustomHostSyntax(value, trusted, "url");
    await checkedCustomHostBase(url.origin, trusted, "url");
    return url;
  } catch (error) {
    throw new Error(`the URL is refused: ${(error as Error).message}`);
  }
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** Set by the gateway (the framing and the body's type), never by a check. */
const RESERVED = new Set([
  "host",
  "content-length",
  "content-type",
  "transfer-encoding",
  "connection",
  "te",
  "upgrade",
]);

/**
 * The check's own headers, lower-cased: reserved names dropped, malformed ones refused. A credential the admin
 * wrote into the guardrail (a webhook's bearer token) is sent: it is the check's own, stored with the guardrail
 * and masked in every view of it. The request's headers are never among these.
 */
function checkHeaders(given: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(given)) {
    const name = rawName.toLowerCase();
    if (!TOKEN.test(name)) throw new Error(`invalid header name '${rawName.slice(0, 64)}'`);
    if (typeof value !== "string" || /[\r\n\0]/.test(value)) throw new Error(`invalid value for header '${name}'`);
    if (RESERVED.has(name)) continue;
    headers[name] = value;
  }
  return headers;
}

export class AnswerTooLarge extends Error {
  constructor() {
    super(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
  }
}

/** The JSON in a body's text; undefined when empty or not JSON. Refused when nested deeper than the limit. */
export function parsedJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!withinJsonDepth(value)) throw new Error("the answer nests objects and arrays too deep");
  return value;
}
