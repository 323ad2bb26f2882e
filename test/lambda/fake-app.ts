/**
 * A small app for the Lambda adapter tests: one route family whose handlers exercise what the adapter must
 * carry (JSON, cookies, request bodies, SSE streams, errors, background work, aborts), served by the real
 * createApp over services whose stores refuse to be used (these routes need none).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { loadSettings } from "../../core/config/settings.ts";
import { createApp, type FetchHandler } from "../../core/http/app.ts";
import type { HandlerMap } from "../../core/http/context.ts";
import { json } from "../../core/http/json.ts";
import type { FunctionUrlEvent } from "../../core/platform/aws/function-url-handler.ts";
import type { RouteFamily } from "../../core/routes/table.ts";
import type { Services } from "../../core/services.ts";
import { createServices } from "../../core/platform/services.ts";
import type { Stores } from "../../core/store/ports.ts";
import { sseEvents } from "../helpers/sse-events.ts";

/** What the handlers observed, for the tests to check. */
export interface Observations {
  /** performance.now() when the SSE handler produced its last event. */
  lastEventProducedAt?: number;
  /** performance.now() when the background work finished. */
  backgroundDoneAt?: number;
  /** The reason the request signal was aborted with, once it was. */
  abortReason?: unknown;
  /** True once the endless stream's source was closed. */
  sourceClosed?: boolean;
}

export const observations: Observations = {};

const family: RouteFamily = {
  name: "test",
  dataPlane: false,
  timeoutSeconds: 10,
  routes: [
    { method: "GET", path: "/hello", handler: "hello", auth: "none" },
    { method: "POST", path: "/echo", handler: "echo", auth: "none" },
    { method: "GET", path: "/events", handler: "events", auth: "none" },
    { method: "GET", path: "/endless", handler: "endless", auth: "none" },
    { method: "GET", path: "/boom", handler: "boom", auth: "none" },
    { method: "GET", path: "/background", handler: "background", auth: "none" },
    { method: "GET", path: "/slow", handler: "slow", auth: "none" },
  ],
};

const handlers: HandlerMap = {
  async hello() {
    const headers = new Headers({ "x-custom": "yes" });
    headers.append("set-cookie", "session=abc; Path=/; HttpOnly");
    headers.append("set-cookie", "theme=dark; Path=/");
    return json({ hello: "world" }, { headers });
  },

  async echo(request) {
    const url = new URL(request.url);
    return json({
      method: request.method,
      host: url.host,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      cookie: request.headers.get("cookie"),
      contentType: request.headers.get("content-type"),
      multi: request.headers.get("x-multi"),
      body: await request.text(),
    });
  },

  /** Three SSE events 50 ms apart, then [DONE]. */
  async events() {
    async function* source() {
      for (let index = 0; index < 3; index++) {
        if (index > 0) await sleep(50);
        if (index === 2) observations.lastEventProducedAt = performance.now();
        yield { index };
      }
    }
    return sseEvents(source());
  },

  /** An event every 10 ms until the request is aborted. */
  async endless(_request, ctx) {
    ctx.signal.addEventListener("abort", () => {
      observations.abortReason = ctx.signal.reason;
    });
    async function* source() {
      try {
        for (let tick = 0; !ctx.signal.aborted; tick++) {
          yield { tick };
          await sleep(10, undefined, { signal: ctx.signal }).catch(() => {});
        }
      } finally {
        observations.sourceClosed = true;
      }
    }
    return sseEvents(source());
  },

  async boom() {
    throw new Error("kaboom: a detail that must not reach the client");
  },

  async background(_request, ctx) {
    ctx.waitUntil(
      sleep(100).then(() => {
        observations.backgroundDoneAt = performance.now();
      }),
    );
    return json({ accepted: true });
  },

  /** Answers only once the request is aborted (a handler slower than the Lambda deadline). */
  async slow(_request, ctx) {
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve, { once: true }));
    observations.abortReason = ctx.signal.reason;
    return json({ tooLate: true });
  },
};

/** Services whose stores throw when used: the test routes must not touch storage. */
export function storelessServices(env: Record<string, string> = {}): Services {
  const unused = new Proxy(
    {},
    { get: (_target, method) => () => Promise.reject(new Error(`unexpected store call: ${String(method)}`)) },
  );
  const stores = {
    records: unused,
    counters: unused,
    blobs: unused,
    queue: unused,
    secrets: unused,
    logSink: unused,
    close: async () => {},
  } as unknown as Stores;
  return createServices(loadSettings(env), stores);
}

export function createTestApp(): FetchHandler {
  return createApp({ families: [family], handlers: { test: handlers }, services: storelessServices() });
}

/** A function URL event (payload format 2.0) as Lambda delivers it. */
export function functionUrlEvent(
  method: string,
  rawPath: string,
  options: {
    rawQueryString?: string;
    headers?: Record<string, string>;
    cookies?: string[];
    body?: string;
    isBase64Encoded?: boolean;
  } = {},
): FunctionUrlEvent {
  return {
    rawPath,
    rawQueryString: options.rawQueryString ?? "",
    headers: { host: "abc123.lambda-url.us-east-1.on.aws", ...options.headers },
    cookies: options.cookies,
    body: options.body,
    isBase64Encoded: options.isBase64Encoded ?? false,
    requestContext: { domainName: "abc123.lambda-url.us-east-1.on.aws", http: { method } },
  };
}
