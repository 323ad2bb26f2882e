import { randomBytes } from "node:crypto";
import { Agent, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { matchPrefix } from "../../infra/router-prefixes.ts";

/**
 * The Router: sst.aws.Router's CloudFront distribution, as far as the gateway can tell the difference.
 * - TLS on the viewer side (a self-signed certificate; the distribution's own is CloudFront's), HTTP/1.1 to origins.
 * - Routing by the longest matching path prefix (infra/router-prefixes.ts matchPrefix, the rule SST's CloudFront
 *   Function applies).
 * - Origin requests as SST's behaviours send them (origin request policy AllViewerExceptHostHeader, and SST's
 *   viewer-request function): every viewer header but Host, which becomes the origin's domain; `x-forwarded-host`
 *   set to the viewer's Host (whatever the viewer sent in it); `x-forwarded-for` extended with the viewer's
 *   address; `via` and `x-amz-cf-id` added; hop-by-hop headers and those CloudFront drops (expect, x-real-ip,
 *   x-forwarded-proto, proxy-*) removed. WebSocket upgrades pass through.
 * - The origin read timeout: how long CloudFront waits for the origin's first byte, then between bytes: 504 before
 *   the answer started, a cut connection after.
 * - Its request limits: 413 past 8,192 bytes of URL or 20,480 bytes of request line and headers.
 * - Answers carry `via`, `x-cache`, `x-amz-cf-pop`, `x-amz-cf-id`. No caching (the routes' policy caches
 *   nothing: TTL 0) and no compression (CloudFront compresses only answers with a Content-Length, which streamed
 *   answers lack).
 */

export type RouteTarget =
  | { kind: "origin"; url: string; domain: string }
  | { kind: "static"; handle(request: IncomingMessage, response: ServerResponse): void };

export interface RouterRoute {
  pattern: string;
  readTimeoutMs: number;
  target: RouteTarget;
}

export interface Router {
  url: string;
  close(): Promise<void>;
}

const MAX_URL_BYTES = 8192;
const MAX_REQUEST_HEAD_BYTES = 20_480;
const VIA = `2.0 ${randomBytes(16).toString("hex")}.cloudfront.net (CloudFront)`;
const POP = "SHAPE50-C1";
const DROPPED_REQUEST_HEADERS = new Set([
  "host",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "x-real-ip",
  "x-forwarded-proto",
  "x-http-method-override",
]);
const DROPPED_RESPONSE_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding"]);

export async function startRouter(routes: RouterRoute[], tls: { key: Buffer; cert: Buffer }): Promise<Router> {
  const table = routes.map((route) => ({ prefix: route.pattern, family: route.pattern, route }));
  const lookup = (path: string) => {
    const match = matchPrefix(table, path);
    return match ? table.find((entry) => entry === match)!.route : undefined;
  };
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const server: Server = createServer({ ...tls, maxHeaderSize: 64 * 1024 }, (request, response) => {
    const refusal = limitsExceeded(request);
    if (refusal) return errorPage(response, 413, refusal, true);
    const route = lookup(pathOf(request));
    if (!route) return errorPage(response, 404, "No behaviour of the distribution matches this path.");
    if (route.target.kind === "static") return route.target.handle(request, response);
    forward(request, response, route as RouterRoute & { target: { kind: "origin" } }, agent);
  });
  server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
    const route = lookup(pathOf(request));
    if (route?.target.kind !== "origin") return socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
    upgrade(request, socket, head, route as RouterRoute & { target: { kind: "origin" } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}

function pathOf(request: IncomingMessage): string {
  return (request.url ?? "/").split("?")[0]!;
}

function limitsExceeded(request: IncomingMessage): string | undefined {
  const url = request.url ?? "/";
  if (Buffer.byteLength(url) + Buffer.byteLength(request.headers.host ?? "") + 8 > MAX_URL_BYTES)
    return "The URL is longer than CloudFront accepts.";
  let size = Buffer.byteLength(`${request.method} ${url} HTTP/1.1\r\n`);
  for (let index = 0; index < request.rawHeaders.length; index += 2)
    size += Buffer.byteLength(request.rawHeaders[index]!) + Buffer.byteLength(request.rawHeaders[index + 1]!) + 4;
  return size > MAX_REQUEST_HEAD_BYTES ? "The request's headers are larger than CloudFront accepts." : undefined;
}

/** The headers CloudFront sends the origin for this viewer request. */
function originHeaders(
  request: IncomingMessage,
  domain: string,
  keepUpgrade: boolean,
): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name.startsWith("x-edge-") || name.startsWith("x-amz-cf-")) continue;
    if (DROPPED_REQUEST_HEADERS.has(name) && !(keepUpgrade && (name === "upgrade" || name === "connection"))) continue;
    headers[name] = value;
  }
  const viewer = request.socket.remoteAddress?.replace(/^::ffff:/, "") ?? "127.0.0.1";
  const forwardedFor = request.headers["x-forwarded-for"];
  headers.host = domain;
  headers["x-forwarded-host"] = request.headers.host ?? "";
  headers["x-forwarded-for"] = forwardedFor ? `${forwardedFor}, ${viewer}` : viewer;
  headers.via = request.headers.via ? `${request.headers.via}, ${VIA}` : VIA;
  headers["x-amz-cf-id"] = cfId();
  return headers;
}

function viewerHeaders(origin: IncomingMessage): Record<string, string | string[]> {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(origin.headers)) {
    if (value !== undefined && !DROPPED_RESPONSE_HEADERS.has(name)) headers[name] = value;
  }
  headers.via = VIA;
  headers["x-cache"] = origin.statusCode && origin.statusCode >= 400 ? "Error from cloudfront" : "Miss from cloudfront";
  headers["x-amz-cf-pop"] = POP;
  headers["x-amz-cf-id"] = cfId();
  return headers;
}

function forward(
  request: IncomingMessage,
  response: ServerResponse,
  route: RouterRoute & { target: { kind: "origin" } },
  agent: Agent,
): void {
  const origin = new URL(route.target.url);
  let timer: NodeJS.Timeout | undefined;
  const outgoing = httpRequest({
    host: origin.hostname,
    port: origin.port,
    method: request.method,
    path: request.url,
    headers: originHeaders(request, route.target.domain, false),
    agent,
  });
  const fail = (status: number, message: string) => {
    clearTimeout(timer);
    outgoing.destroy();
    if (!response.headersSent) errorPage(response, status, message);
    else response.destroy();
  };
  // The origin read timeout, armed again at every byte the origin sends.
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () => fail(504, "CloudFront did not get an answer from the origin within its read timeout."),
      route.readTimeoutMs,
    );
  };
  outgoing.on("response", (answer) => {
    arm();
    response.writeHead(answer.statusCode ?? 502, viewerHeaders(answer));
    response.flushHeaders();
    answer.on("data", (chunk: Buffer) => {
      arm();
      response.write(chunk);
    });
    answer.on("end", () => {
      clearTimeout(timer);
      response.end();
    });
    answer.on("error", () => fail(502, "The origin closed the connection."));
  });
  outgoing.on("error", () => fail(502, "CloudFront could not connect to the origin."));
  // A viewer that goes away: CloudFront drops its connection to the origin.
  response.on("close", () => {
    clearTimeout(timer);
    if (!response.writableFinished) outgoing.destroy();
  });
  request.pipe(outgoing);
  request.on("end", arm);
}

function upgrade(
  request: IncomingMessage,
  socket: Socket,
  head: Buffer,
  route: RouterRoute & { target: { kind: "origin" } },
): void {
  const origin = new URL(route.target.url);
  const outgoing = httpRequest({
    host: origin.hostname,
    port: origin.port,
    method: request.method,
    path: request.url,
    headers: originHeaders(request, route.target.domain, true),
  });
  const timer = setTimeout(() => {
    outgoing.destroy();
    socket.end("HTTP/1.1 504 Gateway Timeout\r\nConnection: close\r\n\r\n");
  }, route.readTimeoutMs);
  outgoing.on("upgrade", (answer, originSocket, originHead) => {
    clearTimeout(timer);
    const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`];
    for (let index = 0; index < answer.rawHeaders.length; index += 2)
      lines.push(`${answer.rawHeaders[index]}: ${answer.rawHeaders[index + 1]}`);
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (originHead.length > 0) socket.write(originHead);
    if (head.length > 0) originSocket.write(head);
    originSocket.pipe(socket).pipe(originSocket);
    originSocket.on("error", () => socket.destroy());
    socket.on("error", () => originSocket.destroy());
    originSocket.on("close", () => socket.destroy());
    socket.on("close", () => originSocket.destroy());
  });
  outgoing.on("response", (answer) => {
    // The origin refused the upgrade: its answer goes to the viewer as is.
    clearTimeout(timer);
    const lines = [`HTTP/1.1 ${answer.statusCode} ${answer.statusMessage}`];
    for (const [name, value] of Object.entries(viewerHeaders(answer)))
      for (const item of [value].flat()) lines.push(`${name}: ${item}`);
    lines.push("connection: close");
    socket.write(`${lines.join("\r\n")}\r\n\r\n`);
    answer.pipe(socket);
  });
  outgoing.on("error", () => {
    clearTimeout(timer);
    socket.end("HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n");
  });
  outgoing.end();
}

/** CloudFront's own error answers are HTML pages. */
function errorPage(response: ServerResponse, status: number, detail: string, close = false): void {
  const title = "ERROR: The request could not be satisfied";
  response.writeHead(status, {
    "content-type": "text/html",
    via: VIA,
    "x-cache": "Error from cloudfront",
    "x-amz-cf-pop": POP,
    "x-amz-cf-id": cfId(),
    ...(close ? { connection: "close" } : {}),
  });
  response.end(
    `<!DOCTYPE HTML><html><head><title>${title}</title></head><body><h1>${status} ${title}</h1><p>${detail}</p><hr>Generated by cloudfront (CloudFront)</body></html>`,
  );
}

function cfId(): string {
  return randomBytes(42).toString("base64url").slice(0, 56);
}
