import { isIP } from "node:net";
import { WebSocket } from "ws";
import { timeoutError, transportFailure, redirectError } from "../../providers/upstream/failures.ts";
import { mapUpstreamError } from "../../providers/errors.ts";
import { UpstreamError } from "../../providers/types.ts";
import type { RealtimeConnector } from "../../inference/realtime/session.ts";
import { CustomHostBlockedError, addressAllowed, guardedLookup } from "../../security/custom-host.ts";
import { relaySocketOf } from "./ws-socket.ts";

/** The most of a refused upgrade's body read for its error message. */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * Opens a provider's realtime WebSocket with `ws`, behind the same address checks as every upstream HTTP call
 * (core/security/guarded-dispatcher.ts): an IP literal is checked before connecting, a name is resolved by
 * guardedLookup (which hands the socket only addresses it checked, so DNS rebinding gets nowhere), and
 * redirects are never followed. Resolves once the socket is open; otherwise an UpstreamError the routing layer
 * can retry or fall back on: the provider's refusal with its status and message, a timeout (408), a blocked
 * address (400 invalid_custom_host) or an unreachable host (502).
 */
export const connectWebSocket: RealtimeConnector = (request) =>
  new Promise((resolve, reject) => {
    const url = new URL(request.url);
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (isIP(host) && !addressAllowed(host, request.trusted)) {
      reject(transportFailure(new CustomHostBlockedError(host, host), false));
      return;
    }
    if (request.signal.aborted) {
      reject(transportFailure(undefined, true));
      return;
    }
    const ws = new WebSocket(url, {
      headers: request.headers,
      lookup: guardedLookup(request.trusted) as never,
      handshakeTimeout: request.timeoutMs,
      maxPayload: request.maxMessageBytes,
      perMessageDeflate: false,
      followRedirects: false,
    });
    const socket = relaySocketOf(ws);
    let settled = false;
    const settle = (error?: UpstreamError) => {
      if (settled) return;
      settled = true;
      request.signal.removeEventListener("abort", onAbort);
      if (error) {
        ws.terminate();
        reject(error);
      } else resolve(socket);
    };
    const onAbort = () => settle(transportFailure(undefined, true));
    request.signal.addEventListener("abort", onAbort, { once: true });
    ws.once("open", () => settle());
    ws.once("unexpected-response", (req, res) => {
      const status = res.statusCode ?? 502;
      const headers = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      if (status >= 300 && status < 400) {
        res.resume();
        req.destroy();
        settle(redirectError({ status, headers }));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      const done = () => {
        req.destroy();
        const text = Buffer.concat(chunks).toString("utf8");
        const mapped = mapUpstreamError(status, text);
        settle(
          new UpstreamError(status, mapped.message, {
            type: mapped.type,
            code: mapped.code,
            param: mapped.param,
            headers,
          }),
        );
      };
      res.on("data", (chunk: Buffer) => {
        if (size >= MAX_ERROR_BODY) return;
        size += chunk.byteLength;
        chunks.push(chunk);
      });
      res.once("end", done);
      res.once("error", done);
    });
    ws.once("error", (error) => {
      if (/handshake has timed out/i.test(error.message)) settle(timeoutError(request.timeoutMs));
      else settle(transportFailure(error, request.signal.aborted));
    });
  });
