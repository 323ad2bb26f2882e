import { SseDecoder } from "../../../providers/stream/sse.ts";
import type { RelaySocket } from "../../../inference/realtime/socket.ts";
import type { SocketConversations } from "./conversations.ts";
import { errorFrame, turnRequest } from "./frames.ts";

/**
 * OpenAI's Responses API over one WebSocket to `/v1/responses` (its "WebSocket mode"; the `openai` SDK's
 * ResponsesWS and `@openai/agents`' OpenAIResponsesWSModel speak it). The client sends `response.create` events,
 * whose fields are those of `POST /v1/responses` (`stream` is implied, `background` is refused); each is answered
 * with the same `response.*` events a streamed HTTP answer has, one JSON text frame each, and failures with an
 * `error` frame `{type, status, error: {type, code, message, param}}`. Turns of one lane (`stream_id`, echoed on
 * every event; no id is one lane) run one after another; lanes run side by side.
 *
 * Each turn IS an HTTP Responses request: it is dispatched to the gateway's own `POST /v1/responses` (the
 * platform hands the app in as `dispatch`), with the headers of the upgrade (key, provider, config...), so it is
 * authenticated, routed, admitted by policies, guarded, logged, priced and stored exactly as over HTTP, natively
 * on OpenAI and translated for every other provider. What the socket adds is its memory: a response made with
 * `store: false` can still be continued on the socket that made it (core/features/responses/websocket/conversations.ts).
 */

export type TurnDispatch = (request: Request, signal: AbortSignal) => Promise<Response>;

export interface ResponsesSocketOptions {
  /** The upgrade request (its headers are every turn's). */
  upgrade: Request;
  dispatch: TurnDispatch;
  conversations: SocketConversations;
}

/** Serves one accepted socket until it closes; resolves then. */
export function serveResponsesSocket(client: RelaySocket, options: ResponsesSocketOptions): Promise<void> {
  const closed = new AbortController();
  const lanes = new Map<string, Promise<void>>();
  const send = (frame: Record<string, unknown>) => client.send(JSON.stringify(frame), false, () => {});

  return new Promise<void>((resolve) => {
    client.onClose(() => {
      closed.abort();
      Promise.allSettled([...lanes.values()]).then(() => resolve());
    });
    client.onMessage((data, binary) => {
      const event = binary ? undefined : parseEvent(data);
      if (!event) {
        send(errorFrame(400, "invalid_request_error", "invalid_event", "Send response.create events as JSON text."));
        return;
      }
      const lane = typeof event.stream_id === "string" ? event.stream_id : "";
      const previous = lanes.get(lane) ?? Promise.resolve();
      const turn = previous.then(() =>
        closed.signal.aborted
          ? undefined
          : runTurn(event, lane === "" ? undefined : lane, options, send, closed.signal),
      );
      const settled = turn.catch((error) => console.error("responses websocket turn failed", error));
      lanes.set(lane, settled);
      settled.then(() => {
        if (lanes.get(lane) === settled) lanes.delete(lane);
      });
    });
  });
}

/** One `response.create`: dispatched as a streamed HTTP request, its events sent as frames. */
async function runTurn(
  event: Record<string, any>,
  streamId: string | undefined,
  options: ResponsesSocketOptions,
  send: (frame: Record<string, unknown>) => void,
  signal: AbortSignal,
): Promise<void> {
  const withLane = (frame: Record<string, unknown>) =>
    streamId === undefined ? frame : { ...frame, stream_id: streamId };
  const problem = eventProblem(event);
  if (problem) {
    send(withLane(errorFrame(400, "invalid_request_error", problem.code, problem.message, problem.param)));
    return;
  }
  const { type: _type, stream_id: _lane, ...fields } = event;
  const prepared = options.conversations.prepare(fields);
  const response = await options.dispatch(turnRequest(options.upgrade, { ...prepared.body, stream: true }), signal);
  if (response.status !== 200 || !response.body) {
    const answer = (await response.json().catch(() => ({}))) as { error?: Record<string, any> };
    const error = answer.error ?? {};
    send(
      withLane(
        errorFrame(
          response.status,
          error.type ?? "server_error",
          error.code ?? null,
          error.message ?? "The request failed.",
          error.param,
        ),
      ),
    );
    return;
  }
  const decoder = new SseDecoder();
  const relay = (data: string) => {
    const parsed = JSON.parse(data) as Record<string, any>;
    const shown = prepared.shown(parsed);
    if (shown.type === "response.completed" || shown.type === "response.incomplete") {
      options.conversations.remember(prepared, shown.response);
    }
    send(withLane(shown));
  };
  try {
    for await (const chunk of response.body) {
      for (const upstream of decoder.push(chunk)) relay(upstream.data);
    }
    for (const upstream of decoder.end()) relay(upstream.data);
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}

function parseEvent(data: Uint8Array | string): Record<string, any> | undefined {
  try {
    const value = JSON.parse(typeof data === "string" ? data : Buffer.from(data).toString("utf8"));
    return value && typeof value === "object" && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** What makes an event no turn: another type, or a field the socket cannot honour. */
function eventProblem(event: Record<string, any>): { code: string; message: string; param?: string } | undefined {
  if (event.type !== "response.create") {
    return {
      code: "unknown_event_type",
      message: `Unknown event type '${String(event.type)}': this socket takes response.create events.`,
      param: "type",
    };
  }
  if (event.background === true) {
    return {
      code: "unsupported_parameter",
      message: "background is not supported over WebSocket: create it with POST /v1/responses.",
      param: "background",
    };
  }
  if (event.stream_id !== undefined && (typeof event.stream_id !== "string" || event.stream_id.length > 200)) {
    return {
      code: "invalid_value",
      message: "stream_id must be a string (at most 200 characters).",
      param: "stream_id",
    };
  }
  return undefined;
}
