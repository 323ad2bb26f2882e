import type { Writable } from "node:stream";
import middy from "@middy/core";
import { executionModeStreamifyResponse } from "@middy/core/StreamifyResponse";
import { type FetchHandler, toHttpError } from "../../http/app.ts";
import { HttpError, errorResponse } from "../../http/errors.ts";
import { traceIdOf } from "../../http/gateway-headers.ts";
import { lazy } from "./lazy.ts";

/**
 * Serves a fetch-style app from a Lambda function URL with response streaming: the function URL event
 * (payload format 2.0) becomes a web Request, and the Response goes back through middy 7's streamify mode:
 * status, headers and cookies in the prelude, then the body chunk by chunk as the app produces it.
 */

/** The parts of a function URL event (payload format 2.0) the adapter reads. */
export interface FunctionUrlEvent {
  rawPath: string;
  rawQueryString?: string;
  /** Lower-case names; repeated headers arrive comma-joined. */
  headers?: Record<string, string | undefined>;
  /** The request's cookies, taken out of the `cookie` header by Lambda. */
  cookies?: string[];
  body?: string;
  isBase64Encoded?: boolean;
  requestContext: { domainName: string; http: { method: string } };
}

/** The parts of the Lambda context the adapter reads. */
export interface LambdaContext {
  getRemainingTimeInMillis?(): number;
}

/** What the Lambda runtime calls for a function wrapped by `awslambda.streamifyResponse`. */
export type StreamingLambdaHandler = (
  event: FunctionUrlEvent,
  responseStream: Writable,
  context: LambdaContext,
) => Promise<void>;

/** What middy's streamify mode expects from the handler: the prelude fields plus a body to pipe. */
interface StreamingResult {
  statusCode: number;
  headers: Record<string, string>;
  cookies: string[];
  body: ReadableStream<Uint8Array> | string;
}

/**
 * Time kept back before the Lambda deadline: the request signal is aborted then, so the app can stop its
 * upstream calls and finish its `waitUntil` work (logs, counters) before Lambda stops the invocation.
 */
const DEADLINE_MARGIN_MS = 1000;

/** Headers about the connection between app and server; they mean nothing in the Lambda prelude. */
const HOP_BY_HOP_HEADERS = new Set(["connection", "keep-alive", "transfer-encoding"]);

/**
 * `init` builds the app once per container, at the first invocation (see `lazy`); an invocation whose
 * init fails is answered with an OpenAI-shaped error and the next one tries again.
 */
export function createFunctionUrlHandler(init: () => Promise<FetchHandler>): StreamingLambdaHandler {
  const app = lazy(init);
  // middy hands the response hook the event, not our per-invocation state: find the state by event.
  const invocations = new WeakMap<object, Invocation>();

  const lambdaHandler = async (
    event: FunctionUrlEvent,
    context: LambdaContext,
    options: { signal: AbortSignal },
  ): Promise<StreamingResult> => {
    const invocation = new Invocation();
    invocations.set(event, invocation);
    // Until the app answers, middy's early timeout guards the deadline: it aborts this signal and sends a 504.
    options.signal.addEventListener("abort", () => invocation.abort(timeoutError()), { once: true });

    let response: Response;
    const headers = requestHeaders(event);
    try {
      const request = toRequest(event, headers, invocation.signal);
      response = await (await app())(request, {
        waitUntil: invocation.waitUntil,
        signal: invocation.signal,
        path: event.rawPath,
      });
    } catch (error) {
      response = errorResponse(toHttpError(error, traceIdOf(headers)));
    }
    // While the body streams, our own timer guards it.
    invocation.armDeadline(context);
    return toStreamingResult(response, invocation);
  };

  const handler = middy(lambdaHandler, {
    executionMode: executionModeStreamifyResponse,
    timeoutEarlyInMillis: DEADLINE_MARGIN_MS,
    timeoutEarlyResponse: () =>
      toStreamingResult(errorResponse(new HttpError(504, "The gateway timed out before the answer started.")), null),
    // Runs after the body has been written and the response stream ended: the client has its answer, and
    // the invocation (so the container's CPU) lasts until the background work is done.
    requestEnd: (request) => invocations.get(request.event as object)?.settle(),
  });
  // middy declares the (event, context) shape; streamify mode makes it (event, responseStream, context).
  return handler as unknown as StreamingLambdaHandler;
}

/** Per-invocation state: the request's abort signal and the background work to await. */
class Invocation {
  private readonly controller = new AbortController();
  private readonly pending: Promise<unknown>[] = [];
  private deadline: NodeJS.Timeout | undefined;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** Aborts the signal shortly before Lambda would stop the invocation. */
  armDeadline(context: LambdaContext): void {
    const remaining = context.getRemainingTimeInMillis?.();
    if (remaining === undefined) return;
    this.deadline = setTimeout(() => this.abort(timeoutError()), Math.max(0, remaining - DEADLINE_MARGIN_MS));
    this.deadline.unref();
  }

  waitUntil = (work: Promise<unknown>): void => {
    this.pending.push(work.catch((error) => console.error("background work failed", error)));
  };

  /** Awaits all background work, including work that background work scheduled. */
  async settle(): Promise<void> {
    while (this.pending.length > 0) await Promise.all(this.pending.splice(0));
    clearTimeout(this.deadline);
  }
}

function requestHeaders(event: FunctionUrlEvent): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    if (value !== undefined) headers.set(name, value);
  }
  if (event.cookies?.length) headers.set("cookie", event.cookies.join("; "));
  return headers;
}

/** A host name or IPv4 address (or a bracketed IPv6 one) with an optional port, nothing else. */
const PLAIN_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

function toRequest(event: FunctionUrlEvent, headers: Headers, signal: AbortSignal): Request {
  const method = event.requestContext.http.method;
  // Behind the Router (CloudFront) the function URL's own domain is not the one the client used. Taken only
  // when it is a plain host[:port]: anyone calling the function URL directly could send `a?` or `a/b`, and the
  // URL built from it would then disagree with the path the app routed on (event.rawPath).
  const forwarded = headers.get("x-forwarded-host");
  const host = forwarded && PLAIN_HOST.test(forwarded) ? forwarded : event.requestContext.domainName;
  const query = event.rawQueryString ? `?${event.rawQueryString}` : "";
  const hasBody = event.body !== undefined && method !== "GET" && method !== "HEAD";
  const body = hasBody && event.isBase64Encoded ? Buffer.from(event.body!, "base64") : event.body;
  return new Request(`https://${host}${event.rawPath}${query}`, {
    method,
    headers,
    body: hasBody ? body : undefined,
    signal,
  });
}

function toStreamingResult(response: Response, invocation: Invocation | null): StreamingResult {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== "set-cookie" && !HOP_BY_HOP_HEADERS.has(name)) headers[name] = value;
  });
  return {
    statusCode: response.status,
    headers,
    cookies: response.headers.getSetCookie(),
    body: response.body ? (invocation ? abortOnCancel(response.body, invocation) : response.body) : "",
  };
}

/**
 * Passes the body through chunk by chunk (no read-ahead: highWaterMark 0). When the response stream fails
 * or closes early (client gone, invocation cut short), middy's pipeline cancels this stream: the request
 * signal is aborted so the app stops reading upstream.
 */
function abortOnCancel(body: ReadableStream<Uint8Array>, invocation: Invocation): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel(reason) {
        invocation.abort(reason ?? new DOMException("The client went away.", "AbortError"));
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

function timeoutError(): DOMException {
  return new DOMException("The Lambda invocation is about to time out.", "TimeoutError");
}
