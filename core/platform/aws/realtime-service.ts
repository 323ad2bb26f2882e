import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ensureOrganisation } from "../../control/organisation/bootstrap.ts";
import { REALTIME_PATH, createRealtimeUpgrade } from "../node/realtime-upgrade.ts";
import { servicesFromEnv } from "./services-from-env.ts";

export interface RealtimeService {
  server: Server;
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  close(): Promise<void>;
}

/**
 * The realtime WebSocket proxy on AWS: Lambda cannot hold a WebSocket, so this family runs as a small container
 * service (infra/realtime.ts, services/realtime/) behind the same Router, with the same stores as the functions
 * (services-from-env.ts: DynamoDB, S3, SQS, the master key). It serves `GET /health` (the load balancer's
 * check) and `/v1/realtime` upgrades (core/platform/node/realtime-upgrade.ts); any other request is a 404.
 */
export async function startRealtimeService(
  env: Record<string, string | undefined> = process.env,
): Promise<RealtimeService> {
  const services = servicesFromEnv(env);
  // As the functions do on their first request: a deployment whose first caller is a realtime client works too.
  await ensureOrganisation(services.stores.records, { adminKeySecret: services.settings.GATEWAY_BOOTSTRAP_ADMIN_KEY });
  const pending = new Set<Promise<unknown>>();
  const waitUntil = (work: Promise<unknown>) => {
    const tracked = work
      .catch((error) => console.error("background work failed", error))
      .finally(() => pending.delete(tracked));
    pending.add(tracked);
  };
  const upgrades = createRealtimeUpgrade(services, { waitUntil });
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    if (request.method === "GET" && (path === "/health" || path === "/v1/health")) {
      response.writeHead(200, { "content-type": "application/json" }).end('{"status":"ok"}');
      return;
    }
    const upgradeRequired = path === REALTIME_PATH;
    const error = upgradeRequired
      ? {
          message: `${REALTIME_PATH} is a WebSocket endpoint: connect with a WebSocket client.`,
          code: "upgrade_required",
        }
      : { message: `Invalid URL (${request.method} ${path})`, code: "unknown_url" };
    response
      .writeHead(upgradeRequired ? 426 : 404, { "content-type": "application/json" })
      .end(JSON.stringify({ error: { ...error, type: "invalid_request_error", param: null } }));
  });
  server.on("upgrade", (request, socket, head) => upgrades.handle(request, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(services.settings.PORT, services.settings.HOST, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.address === "0.0.0.0" || address.address === "::" ? "127.0.0.1" : address.address;
  let closing: Promise<void> | undefined;
  return {
    server,
    url: `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`,
    close() {
      closing ??= (async () => {
        await upgrades.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await Promise.allSettled([...pending]);
      })();
      return closing;
    },
  };
}
