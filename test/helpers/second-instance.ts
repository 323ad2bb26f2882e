import { loadSettings } from "../../core/config/settings.ts";
import { createApp } from "../../core/http/app.ts";
import { startServer } from "../../core/platform/local/server.ts";
import { ALL_HANDLERS } from "../../core/routes/handlers.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { createServices } from "../../core/platform/services.ts";
import type { TestGateway } from "./gateway.ts";

/**
 * A second gateway instance over the first one's stores: its own Services (its own caches, policies, pools:
 * nothing in memory is shared) and its own HTTP server, reading and writing the same Records, Counters and
 * Blobs. The local stand-in for a second Lambda instance of a function (SQLite is one process's, so two
 * processes cannot share it; the AWS shape runs real pairs of instances on DynamoDB).
 */
export async function startSecondInstance(gateway: TestGateway, env: Record<string, string> = {}) {
  const settings = loadSettings({
    PORT: "0",
    HOST: "127.0.0.1",
    GATEWAY_DATA_DIR: gateway.gateway.services.settings.GATEWAY_DATA_DIR,
    TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost",
    ...env,
  });
  const services = createServices(settings, gateway.gateway.services.stores);
  const app = createApp({ families: ROUTE_FAMILIES, handlers: ALL_HANDLERS, services });
  const server = await startServer(app, { port: 0, host: "127.0.0.1", pending: new Set() });
  return {
    url: server.url,
    services,
    async close() {
      await server.close();
      // Its analytics buffer is flushed while the shared stores are still open.
      await services.analytics.flush();
    },
  };
}
