/**
 * One end of a realtime session as the relay (relay.ts) sees it: a WebSocket reduced to what relaying needs.
 * The platform wraps its sockets in this (core/platform/node/ws-socket.ts wraps the `ws` package), so the core
 * knows no WebSocket library.
 */
export interface RelaySocket {
  /** Sends one message as it came (a text frame unless `binary`); `sent` runs once it is written out or failed. */
  send(data: Uint8Array | string, binary: boolean, sent: () => void): void;
  /** Starts the closing handshake (a valid close code: see closeCodeFor). */
  close(code: number, reason: string): void;
  /** Stops reading messages until resume (backpressure towards a slow reader on the other side). */
  pause(): void;
  resume(): void;
  /** Every message, in order. Messages that arrived before a listener was set are delivered to it first. */
  onMessage(listener: (data: Uint8Array | string, binary: boolean) => void): void;
  /** Once, when the socket has closed (1005: no code was sent; 1006: the connection was lost). */
  onClose(listener: (code: number, reason: string) => void): void;
}

/** A close code one may send (RFC 6455 7.4: 1005, 1006 and 1015 only report, 1004 is reserved). */
export function isSendableCloseCode(code: number): boolean {
  return (
    (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999)
  );
}

/**
 * The code to close one side with when the other closed with `code`: the same where it can be sent; a close
 * without a code is a normal one; a lost connection is the other side's failure (1011) seen from the client,
 * and nothing the provider needs to hear more of than a normal close.
 */
export function closeCodeFor(code: number, closedBy: "client" | "upstream"): number {
  if (isSendableCloseCode(code)) return code;
  if (code === 1005) return 1000;
  return closedBy === "upstream" ? 1011 : 1000;
}

/** A close reason is at most 123 bytes of UTF-8. */
export function closeReason(reason: string): string {
  const bytes = Buffer.from(reason, "utf8");
  if (bytes.byteLength <= 123) return reason;
  return new TextDecoder().decode(bytes.subarray(0, 120)).replace(/\uFFFD$/, "");
}
