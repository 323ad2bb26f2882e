import { Agent, createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { parseFlags, printReady } from "./lib/cli.ts";

/**
 * The floor: the least a reverse proxy written on node:http must pay per request. It forwards method, path,
 * headers and body to one upstream over keep-alive connections and pipes the answer back as it arrives (so
 * streams stay streams). No parsing, no validation, no auth: any gateway in Node costs at least this.
 *
 * `node bench/floor-proxy.ts --upstream=http://127.0.0.1:N [--port=0]` prints `{"ready":true,"url":...}`.
 */

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
  "proxy-connection",
  "te",
  "trailer",
]);

function forwardable(headers: IncomingHttpHeaders, host: string): IncomingHttpHeaders {
  const out: IncomingHttpHeaders = {};
  for (const name in headers) if (!HOP_BY_HOP.has(name)) out[name] = headers[name];
  out.host = host;
  return out;
}

export async function startFloorProxy(options: { upstream: string; port?: number; host?: string }): Promise<{
  url: string;
  server: Server;
  close(): Promise<void>;
}> {
  const upstream = new URL(options.upstream);
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: 1024 });
  const server = createServer({ keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, (req, res) => {
    const upstreamRequest = httpRequest(
      {
        agent,
        hostname: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: forwardable(req.headers, upstream.host),
      },
      (upstreamResponse) => {
        const headers: IncomingHttpHeaders = {};
        for (const name in upstreamResponse.headers) {
          if (!HOP_BY_HOP.has(name)) headers[name] = upstreamResponse.headers[name];
        }
        res.writeHead(upstreamResponse.statusCode ?? 502, headers);
        upstreamResponse.pipe(res);
      },
    );
    upstreamRequest.on("error", (error) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: `upstream failed: ${error.message}` } }));
    });
    res.on("close", () => {
      if (!res.writableFinished) upstreamRequest.destroy();
    });
    req.pipe(upstreamRequest);
  });
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        agent.destroy();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2));
  if (!flags.upstream) throw new Error("--upstream=<url> is required");
  const proxy = await startFloorProxy({ upstream: flags.upstream, port: Number(flags.port ?? 0) });
  printReady({ url: proxy.url, pid: process.pid });
  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.on(signal, () => proxy.close().then(() => process.exit(0)));
}
