import type { HandlerMap } from "../../http/context.ts";
import { HttpError } from "../../http/errors.ts";

export const handlers: HandlerMap = {
  /**
   * `GET /v1/realtime` without a WebSocket upgrade. Upgrades never reach the app: the platform's upgrade handler
   * (core/platform/node/realtime-upgrade.ts) takes them, so whatever reaches this route could not be relayed.
   */
  async realtime(request) {
    const upgrade = request.headers.get("upgrade");
    if (upgrade?.toLowerCase() === "websocket") {
      // Only where no upgrade handler runs (a platform without one).
      throw new HttpError(501, "Realtime sessions are not served by this deployment of the gateway.", {
        code: "realtime_unavailable",
      });
    }
    throw new HttpError(
      426,
      "/v1/realtime is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket).",
      {
        code: "upgrade_required",
        headers: { upgrade: "websocket" },
      },
    );
  },
};
