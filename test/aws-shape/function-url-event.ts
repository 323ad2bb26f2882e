import { randomBytes, randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

/**
 * The event a Lambda function URL hands its function (payload format 2.0, as the Lambda developer guide's
 * "Invoking Lambda function URLs" describes it): header names in lower case with repeated headers joined by
 * commas, cookies taken out into `cookies`, the query string raw and parsed, the request context, and the body,
 * base64-encoded unless its content type is text. Lambda's own headers (x-forwarded-proto/port/for, the trace id,
 * the TLS details) are added; `host` is the function URL's domain.
 */

export interface FunctionUrlRequestEvent {
  version: "2.0";
  routeKey: "$default";
  rawPath: string;
  rawQueryString: string;
  cookies?: string[];
  headers: Record<string, string>;
  queryStringParameters?: Record<string, string>;
  requestContext: {
    accountId: string;
    apiId: string;
    domainName: string;
    domainPrefix: string;
    http: { method: string; path: string; protocol: string; sourceIp: string; userAgent: string };
    requestId: string;
    routeKey: "$default";
    stage: "$default";
    time: string;
    timeEpoch: number;
  };
  body?: string;
  isBase64Encoded: boolean;
}

/** Content types Lambda passes as text; every other body (multipart, octet-stream, none) arrives base64-encoded. */
const TEXT_TYPE = /^(text\/|application\/(json|xml|javascript)\b|application\/[\w.+-]+\+(json|xml)\b)/i;

export function isTextBody(contentType: string | undefined): boolean {
  return contentType !== undefined && TEXT_TYPE.test(contentType.trim());
}

export function functionUrlEvent(request: IncomingMessage, body: Buffer, domain: string): FunctionUrlRequestEvent {
  const target = request.url ?? "/";
  const queryAt = target.indexOf("?");
  const rawPath = queryAt === -1 ? target : target.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? "" : target.slice(queryAt + 1);
  const sourceIp = request.socket.remoteAddress?.replace(/^::ffff:/, "") ?? "127.0.0.1";
  const headers: Record<string, string> = {};
  const cookies: string[] = [];
  const raw = request.rawHeaders;
  for (let index = 0; index < raw.length; index += 2) {
    const name = raw[index]!.toLowerCase();
    const value = raw[index + 1]!;
    if (name === "cookie") cookies.push(...value.split(/;\s*/).filter(Boolean));
    else headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  const now = new Date();
  Object.assign(headers, {
    host: domain,
    "x-forwarded-proto": "https",
    "x-forwarded-port": "443",
    "x-forwarded-for": headers["x-forwarded-for"] ? `${headers["x-forwarded-for"]}, ${sourceIp}` : sourceIp,
    "x-amzn-trace-id": `Root=1-${Math.floor(now.getTime() / 1000).toString(16)}-${randomBytes(12).toString("hex")}`,
    "x-amzn-tls-version": "TLSv1.3",
    "x-amzn-tls-cipher-suite": "TLS_AES_128_GCM_SHA256",
  });
  const event: FunctionUrlRequestEvent = {
    version: "2.0",
    routeKey: "$default",
    rawPath,
    rawQueryString,
    ...(cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(rawQueryString ? { queryStringParameters: queryParameters(rawQueryString) } : {}),
    requestContext: {
      accountId: "anonymous",
      apiId: domain.split(".")[0]!,
      domainName: domain,
      domainPrefix: domain.split(".")[0]!,
      http: {
        method: request.method ?? "GET",
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp,
        userAgent: headers["user-agent"] ?? "",
      },
      requestId: randomUUID(),
      routeKey: "$default",
      stage: "$default",
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
  };
  if (body.byteLength > 0) {
    const text = isTextBody(headers["content-type"]);
    event.body = body.toString(text ? "utf8" : "base64");
    event.isBase64Encoded = !text;
  }
  return event;
}

/** Repeated parameters joined by commas, as in payload format 2.0. */
function queryParameters(query: string): Record<string, string> {
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    parameters[name] = name in parameters ? `${parameters[name]},${value}` : value;
  }
  return parameters;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/** `12/Mar/2020:19:03:58 +0000` */
function clfTime(date: Date): string {
  const two = (value: number) => String(value).padStart(2, "0");
  return `${two(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`;
}
