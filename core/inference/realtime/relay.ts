import { closeCodeFor, closeReason, type RelaySocket } from "./socket.ts";

/** Limits of one relayed session (settings GATEWAY_REALTIME_*). */
export interface RelayLimits {
  /** Closes the session (1001) after this long without a message either way. */
  idleMs: number;
  /** Closes the session (1001) after this long in all. */
  maxSessionMs: number;
  /** Bytes one direction may have sent but not yet written out; past it the session closes with 1013. */
  maxBufferedBytes: number;
}

/** How a session ended: the close code and reason, and which side (or the gateway) ended it. */
export interface RelayEnd {
  code: number;
  reason: string;
  by: "client" | "upstream" | "gateway";
}

export interface RelayObserver {
  /** Every message the upstream sent, before it is relayed (usage is read here). */
  upstreamMessage?(data: Uint8Array | string, binary: boolean): void;
  clientMessage?(data: Uint8Array | string, binary: boolean): void;
}

/**
 * Relays a realtime session between the client's socket and the provider's: every message both ways, unchanged
 * and in order (each side's messages are sent in the order they arrive, and a socket sends in order).
 *
 * Backpressure: each direction counts the bytes it handed to the receiving socket that are not yet written out.
 * Above a high-water mark (a quarter of the limit, at most 1 MB) it stops reading from the sender until they
 * drain below half of that; a sender that keeps going anyway (messages already read) past `maxBufferedBytes`
 * ends the session with 1013 (try again later), so nothing is buffered without bound.
 *
 * Closing: when one side closes, the other is closed with the same code where it can be sent (closeCodeFor);
 * the idle and session timers close both with 1001. Resolves once, with how it ended.
 */
export function relaySession(
  client: RelaySocket,
  upstream: RelaySocket,
  limits: RelayLimits,
  observer: RelayObserver = {},
): Promise<RelayEnd> {
  return new Promise<RelayEnd>((resolve) => {
    let ended = false;
    const highWater = Math.min(1024 * 1024, Math.max(1, Math.floor(limits.maxBufferedBytes / 4)));
    const lowWater = Math.floor(highWater / 2);

    const end = (result: RelayEnd) => {
      if (ended) return;
      ended = true;
      clearTimeout(idleTimer);
      clearTimeout(sessionTimer);
      const reason = closeReason(result.reason);
      if (result.by !== "client") client.close(closeCodeFor(result.code, "upstream"), reason);
      if (result.by !== "upstream") upstream.close(closeCodeFor(result.code, "client"), reason);
      resolve({ ...result, reason });
    };

    const idleTimer = setTimeout(() => end({ code: 1001, reason: "session idle", by: "gateway" }), limits.idleMs);
    const sessionTimer = setTimeout(
      () => end({ code: 1001, reason: "session time limit reached", by: "gateway" }),
      limits.maxSessionMs,
    );

    const pipe = (
      from: RelaySocket,
      to: RelaySocket,
      observe: ((data: Uint8Array | string, binary: boolean) => void) | undefined,
    ) => {
      let queued = 0;
      let paused = false;
      from.onMessage((data, binary) => {
        if (ended) return;
        idleTimer.refresh();
        observe?.(data, binary);
        const size = typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
        queued += size;
        if (queued > limits.maxBufferedBytes) {
          end({ code: 1013, reason: "the other side reads too slowly", by: "gateway" });
          return;
        }
        to.send(data, binary, () => {
          queued -= size;
          if (paused && queued <= lowWater && !ended) {
            paused = false;
            from.resume();
          }
        });
        if (!paused && queued > highWater) {
          paused = true;
          from.pause();
        }
      });
    };
    pipe(client, upstream, observer.clientMessage);
    pipe(upstream, client, observer.upstreamMessage);
    client.onClose((code, reason) => end({ code, reason, by: "client" }));
    upstream.onClose((code, reason) => end({ code, reason, by: "upstream" }));
  });
}
