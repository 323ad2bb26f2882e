import type { WebSocket } from "ws";
import type { RelaySocket } from "../../realtime/socket.ts";

/**
 * A `ws` WebSocket as the relay's socket (core/realtime/socket.ts). Listening starts here, at once: messages
 * that arrive before the relay subscribes (the provider's `session.created` right after its socket opened,
 * while the client's upgrade is still being accepted) are kept and delivered first, and the close after them.
 */
export function relaySocketOf(ws: WebSocket): RelaySocket {
  const early: Array<[Buffer, boolean]> = [];
  let messageListener: ((data: Uint8Array, binary: boolean) => void) | undefined;
  let closeListener: ((code: number, reason: string) => void) | undefined;
  let closed: [number, string] | undefined;

  ws.on("message", (data, isBinary) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    if (messageListener) messageListener(bytes, isBinary);
    else early.push([bytes, isBinary]);
  });
  // A message over maxPayload: ws closes this socket with 1009 itself, stops reading and reports `close` as 1006
  // (it never reads the peer's answer). The relay must see the 1009, to close the other side with it too (not
  // as a lost connection: 1011 to the client).
  let tooBig = false;
  ws.on("close", (code, reason) => {
    closed = tooBig ? [1009, "message too big"] : [code, reason.toString("utf8")];
    if (closeListener && early.length === 0) closeListener(...closed);
  });
  // An error is always followed by `close` (ws emits both); without a listener it would be thrown.
  ws.on("error", (error: Error & { code?: string }) => {
    if (error.code === "WS_ERR_UNSUPPORTED_MESSAGE_LENGTH") tooBig = true;
  });

  return {
    send(data, binary, sent) {
      if (ws.readyState !== ws.OPEN) {
        sent();
        return;
      }
      ws.send(data, { binary }, () => sent());
    },
    close(code, reason) {
      if (ws.readyState === ws.CONNECTING || ws.readyState === ws.OPEN) ws.close(code, reason);
    },
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    onMessage(listener) {
      messageListener = listener;
      for (const [bytes, binary] of early.splice(0)) listener(bytes, binary);
      if (closed && closeListener) closeListener(...closed);
    },
    onClose(listener) {
      closeListener = listener;
      if (closed && early.length === 0) queueMicrotask(() => listener(...closed!));
    },
  };
}
