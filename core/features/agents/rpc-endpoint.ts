import { SSE_HEADERS, formatSSEErrorEvent, formatSSEEvent } from "@a2a-js/sdk";
import { isLegacyJsonRpcMethod } from "@a2a-js/sdk/compat/v0_3";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import { VersionNotSupportedError } from "@a2a-js/sdk/errors";
import { type A2ARequestHandler, JsonRpcTransportHandler, ServerCallContext } from "@a2a-js/sdk/server";

/**
 * A2A JSON-RPC over HTTP, answered by the SDK's transport handlers: A2A 1.0 (`SendMessage`, ...) by
 * JsonRpcTransportHandler, 0.3 (`message/send`, ...) by the compat layer's LegacyJsonRpcTransportHandler, both
 * over the same request handler. The wire version is negotiated as A2A 1.0 has it: the `A2A-Version` header
 * when the client sends one ("1.0" or "0.3"; any other answers VersionNotSupportedError), else the method
 * name's family (0.3 clients send no header). Streaming methods answer server-sent events, relayed as they
 * come; an error before the first event is answered as a plain JSON-RPC error.
 */

/** The versions the gateway's agent endpoint speaks, whatever the upstream speaks (the SDK translates). */
export const GATEWAY_A2A_VERSIONS = ["1.0", "0.3"];

export interface RpcEnvelope {
  jsonrpc: string;
  id: string | number | null;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/** What the caller learns of the call, for its log. */
export interface RpcObserver {
  /** The answer of a unary call, or a stream's first event. */
  answered(envelope: RpcEnvelope, stream: boolean): void;
  /** Each later event of a stream. */
  streamed(envelope: RpcEnvelope): void;
  /** The stream ended (normally, with an error, or because the client left). */
  ended(error?: RpcEnvelope["error"]): void;
}

export interface RpcCall {
  /** The parsed request, or the raw text when it is not JSON (the transport answers the parse error). */
  body: Record<string, unknown> | string;
  method: string | undefined;
  id: string | number | null;
}

/** Reads just enough of the request to route and log it; validation is the transport handler's. */
export function readRpcCall(text: string): RpcCall {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return { body: text, method: undefined, id: null };
    const body = parsed as Record<string, unknown>;
    const id = typeof body.id === "string" || typeof body.id === "number" ? body.id : null;
    return { body, method: typeof body.method === "string" ? body.method.slice(0, 100) : undefined, id };
  } catch {
    return { body: text, method: undefined, id: null };
  }
}

/** "1.0", "0.3", or undefined for a version the gateway does not speak ("1" and "0.3.0" are read as such). */
export function negotiatedVersion(header: string): string | undefined {
  const [major, minor = "0"] = header.trim().split(".");
  const version = `${major}.${minor}`;
  return GATEWAY_A2A_VERSIONS.includes(version) ? version : undefined;
}

export async function answerRpc(
  call: RpcCall,
  handler: A2ARequestHandler,
  observer: RpcObserver,
  versionHeader?: string | null,
): Promise<Response> {
  const requested = versionHeader ? negotiatedVersion(versionHeader) : undefined;
  const legacy = versionHeader ? requested === "0.3" : isLegacyJsonRpcMethod(call.method);
  const toError = legacy
    ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError
    : JsonRpcTransportHandler.mapToJSONRPCError;
  if (versionHeader && !requested) {
    const refusal = new VersionNotSupportedError(
      `A2A version '${versionHeader.slice(0, 20)}' is not supported. Supported versions: ${GATEWAY_A2A_VERSIONS.join(", ")}.`,
    );
    const envelope = { jsonrpc: "2.0", id: call.id, error: toError(refusal) };
    observer.answered(envelope, false);
    observer.ended(envelope.error);
    return jsonAnswer(envelope);
  }
  const context = new ServerCallContext({ requestedVersion: legacy ? "0.3" : "1.0" });
  const answer = legacy
    ? await new LegacyJsonRpcTransportHandler(handler).handle(call.body, context)
    : await new JsonRpcTransportHandler(handler).handle(call.body, context);
  if (!isStream(answer)) {
    observer.answered(answer as RpcEnvelope, false);
    observer.ended();
    return jsonAnswer(answer);
  }
  const iterator = answer[Symbol.asyncIterator]();
  let first: IteratorResult<RpcEnvelope>;
  try {
    first = (await iterator.next()) as IteratorResult<RpcEnvelope>;
  } catch (error) {
    const envelope = { jsonrpc: "2.0", id: call.id, error: toError(error) };
    observer.answered(envelope, false);
    observer.ended(envelope.error);
    return jsonAnswer(envelope);
  }
  if (!first.done) observer.answered(first.value, true);
  const encoder = new TextEncoder();
  let finished = false;
  const finish = (error?: RpcEnvelope["error"]) => {
    if (finished) return;
    finished = true;
    observer.ended(error);
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (first.done) {
        finish();
        controller.close();
      } else controller.enqueue(encoder.encode(formatSSEEvent(first.value)));
    },
    async pull(controller) {
      if (finished) return;
      try {
        const next = (await iterator.next()) as IteratorResult<RpcEnvelope>;
        if (next.done) {
          finish();
          controller.close();
          return;
        }
        observer.streamed(next.value);
        controller.enqueue(encoder.encode(formatSSEEvent(next.value)));
      } catch (error) {
        const envelope = { jsonrpc: "2.0", id: call.id, error: toError(error) };
        controller.enqueue(encoder.encode(formatSSEErrorEvent(envelope)));
        finish(envelope.error);
        controller.close();
      }
    },
    async cancel() {
      finish({ code: -32000, message: "The client closed the stream." });
      await iterator.return?.(undefined);
    },
  });
  // `Connection` is the server's to set (HTTP/2 forbids it).
  const { Connection: _connection, ...headers } = SSE_HEADERS;
  return new Response(body, { status: 200, headers });
}

function isStream(value: unknown): value is AsyncGenerator<unknown, void, undefined> {
  return typeof (value as { [Symbol.asyncIterator]?: unknown })?.[Symbol.asyncIterator] === "function";
}

function jsonAnswer(body: unknown): Response {
  return new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });
}
