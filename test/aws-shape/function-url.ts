import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { HTTP_INTEGRATION_CONTENT_TYPE, PRELUDE_DELIMITER } from "../lambda/awslambda-runtime.ts";
import { functionUrlEvent } from "./function-url-event.ts";
import type { InstancePool } from "./instance-pool.ts";
import type { StreamSink } from "./instance.ts";

/**
 * A Lambda function URL in front of a streaming function (invoke mode RESPONSE_STREAM): the HTTP request becomes
 * a payload 2.0 event (function-url-event.ts) of at most 6 MB, the function runs on one of its instances, and
 * what it writes goes back as it comes: the prelude (status, headers, cookies, then 8 NUL bytes) becomes the
 * response head, the rest the chunked body. As on Lambda:
 * - an event over 6,291,456 bytes (a binary body counts base64-encoded) is refused with 413 before any instance;
 * - a function that fails or times out before its prelude is answered 502; after it, the connection is cut;
 * - a client that goes away does not stop the invocation: it runs to its end, its writes going nowhere.
 */

export const MAX_EVENT_BYTES = 6_291_456;

export interface FunctionUrl {
  /** Where the Router reaches it (http on loopback; the real one is https). */
  url: string;
  /** The domain Lambda would give it, `<url-id>.lambda-url.us-east-1.on.aws`. */
  domain: string;
  close(): Promise<void>;
}

export async function startFunctionUrl(domain: string, pool: InstancePool): Promise<FunctionUrl> {
  const server: Server = createServer((request, response) => {
    handle(request, response, domain, pool).catch((error) => {
      console.error(`function URL ${domain}: ${(error as Error).stack ?? error}`);
      if (!response.headersSent) lambdaError(response, 502, "Internal Server Error");
      else response.destroy();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    domain,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function handle(request: IncomingMessage, response: ServerResponse, domain: string, pool: InstancePool) {
  const body = await readBody(request, MAX_EVENT_BYTES);
  if (!body) return tooLarge(response, request);
  const event = functionUrlEvent(request, body, domain);
  if (Buffer.byteLength(JSON.stringify(event)) > MAX_EVENT_BYTES) return tooLarge(response, request);
  const relay = new PreludeRelay(response);
  try {
    await pool.invoke((instance) => {
      relay.instance = instance.id;
      return instance.invoke(event, relay);
    });
    relay.end();
  } catch (error) {
    relay.fail(error as Error);
  }
}

/** The body, or undefined once it passes `limit` bytes (the rest is not read). */
async function readBody(request: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += chunk.length;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function tooLarge(response: ServerResponse, request: IncomingMessage): void {
  lambdaError(response, 413, `Request must be smaller than ${MAX_EVENT_BYTES} bytes for the InvokeFunction operation`);
  // The rest of an oversized body is not read: close rather than drain it.
  request.once("end", () => {}).resume();
}

function lambdaError(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "application/json", "x-amzn-errortype": "Lambda" });
  response.end(JSON.stringify({ Message: message }));
}

/** Turns the function's writes into the HTTP answer: the prelude into the head, the rest into the body. */
class PreludeRelay implements StreamSink {
  /** The instance that runs the invocation: answered in `x-shape-instance`, so tests can see where requests went. */
  instance = "";
  #pending: Buffer = Buffer.alloc(0);
  #headed = false;
  readonly #response: ServerResponse;

  constructor(response: ServerResponse) {
    this.#response = response;
  }

  chunk(bytes: Uint8Array, contentType: string | undefined): void {
    if (this.#headed) {
      this.#write(bytes);
      return;
    }
    if (contentType !== HTTP_INTEGRATION_CONTENT_TYPE) {
      // No prelude: the function URL answers 200 with the stream's own content type.
      this.#head(200, { "content-type": contentType ?? "application/octet-stream" }, []);
      this.#write(bytes);
      return;
    }
    this.#pending = Buffer.concat([this.#pending, bytes]);
    const end = this.#pending.indexOf(Buffer.from(PRELUDE_DELIMITER));
    if (end === -1) return;
    const prelude = JSON.parse(this.#pending.subarray(0, end).toString("utf8")) as {
      statusCode?: number;
      headers?: Record<string, string>;
      cookies?: string[];
    };
    const rest = this.#pending.subarray(end + PRELUDE_DELIMITER.length);
    this.#pending = Buffer.alloc(0);
    this.#head(prelude.statusCode ?? 200, prelude.headers ?? {}, prelude.cookies ?? []);
    if (rest.byteLength > 0) this.#write(rest);
  }

  /** The stream ended, or the invocation did without ending it. */
  end(): void {
    if (!this.#headed) this.#head(200, {}, []);
    if (!this.#response.writableEnded) this.#response.end();
  }

  fail(error: Error): void {
    console.error(`function URL: the invocation failed: ${error.message}`);
    if (!this.#headed) {
      this.#headed = true;
      lambdaError(this.#response, 502, "Internal Server Error");
    } else if (!this.#response.writableEnded) {
      // Part of the answer is out: the client sees the connection cut.
      this.#response.destroy();
    }
  }

  #head(status: number, headers: Record<string, string>, cookies: string[]): void {
    this.#headed = true;
    if (this.#response.destroyed) return;
    const head: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
      // The body is relayed chunked, as a streamed answer is.
      if (name.toLowerCase() !== "content-length") head[name] = value;
    }
    if (cookies.length > 0) head["set-cookie"] = cookies;
    head["x-amzn-requestid"] = crypto.randomUUID();
    head["x-shape-instance"] = this.instance;
    this.#response.writeHead(status, head);
    this.#response.flushHeaders();
  }

  #write(bytes: Uint8Array): void {
    // A client that went away does not stop the function: its writes go nowhere.
    if (!this.#response.destroyed && !this.#response.writableEnded) this.#response.write(bytes);
  }
}
