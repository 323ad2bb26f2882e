import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { refuseResponsesSocket } from "../../features/responses/websocket/connect.ts";
import { SocketConversations } from "../../features/responses/websocket/conversations.ts";
import { serveResponsesSocket, type TurnDispatch } from "../../features/responses/websocket/session.ts";
import type { Services } from "../../services.ts";
import { relaySocketOf } from "./ws-socket.ts";

/**
 * The Responses WebSocket mode on a node:http server (core/features/responses/websocket): the upgrade is
 * authenticated before it is accepted (a refusal is an HTTP answer), then `ws` accepts it and every
 * `response.create` on it is dispatched to the app's `POST /v1/responses`. Used by realtime-upgrade.ts, which
 * owns the server's `upgrade` event and its shutdown.
 */
export interface ResponsesUpgrade {
  /** Serves one upgrade; resolves once its socket has closed (or the upgrade was refused). */
  serve(
    request: IncomingMessage,
    fetchRequest: Request,
    socket: Duplex,
    head: Buffer,
    refuse: (response: Response) => Promise<void>,
  ): Promise<void>;
  /** Closes every open socket (1001) and stops accepting. */
  close(): void;
}

export function createResponsesUpgrade(services: Services, dispatch: TurnDispatch): ResponsesUpgrade {
  const server = new WebSocketServer({
    noServer: true,
    clientTracking: true,
    perMessageDeflate: false,
    // A turn is a Responses request body: the same bound as over HTTP.
    maxPayload: services.settings.GATEWAY_MAX_JSON_BODY_BYTES,
  });
  return {
    async serve(request, fetchRequest, socket, head, refuse) {
      const refusal = await refuseResponsesSocket(fetchRequest, services);
      if (refusal) return refuse(refusal);
      if (socket.destroyed) return;
      await new Promise<void>((resolve) => {
        // ws destroys a socket that is no longer writable without calling back.
        socket.once("close", () => resolve());
        server.handleUpgrade(request, socket, head, (ws) => {
          serveResponsesSocket(relaySocketOf(ws), {
            upgrade: fetchRequest,
            dispatch,
            conversations: new SocketConversations(),
          }).then(resolve, resolve);
        });
      });
    },
    close() {
      for (const ws of server.clients) ws.close(1001, "the gateway is shutting down");
      server.close();
    },
  };
}
