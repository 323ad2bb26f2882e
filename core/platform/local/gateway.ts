import { mkdirSync } from "node:fs";
import { type BootstrapResult, ensureOrganisation } from "../../control/organisation/bootstrap.ts";
import { loadSettings, type Settings } from "../../config/settings.ts";
import { createApp } from "../../http/app.ts";
import { ALL_HANDLERS } from "../../routes/handlers.ts";
import { ROUTE_FAMILIES } from "../../routes/table.ts";
import type { ScheduledTask, Services } from "../../services.ts";
import { createServices } from "../services.ts";
import { QUEUE_CONSUMERS } from "../../routes/queue-consumers.ts";
import { SCHEDULED_TASKS } from "../../routes/scheduled-tasks.ts";
import { CheckThreadPool, defaultCheckThreads } from "../node/check-threads.ts";
import { createRealtimeUpgrade } from "../node/realtime-upgrade.ts";
import type { Stores } from "../../store/ports.ts";
import { CachingSecretResolver, type SecretResolver } from "../../store/secret-refs.ts";
import { type DeploymentHeartbeat, startDeploymentHeartbeat } from "./deployment-heartbeat.ts";
import { LocalSecretResolver } from "./local-secret-refs.ts";
import { folderConsoleFiles } from "./console-files.ts";
import { createLocalStores } from "./local-stores.ts";
import { LogBacklogGate } from "./log-backlog-gate.ts";
import { ThreadLogSink } from "./thread-log-sink.ts";
import { type RunningServer, startServer } from "./server.ts";
import { WorkerLoop } from "./worker-loop.ts";

export interface LocalGateway {
  /** Base URL without /v1, e.g. http://127.0.0.1:8787 */
  url: string;
  services: Services;
  bootstrap: BootstrapResult;
  worker: WorkerLoop;
  server: RunningServer;
  /** Holds new requests while the storage thread is far behind with the request logs (SQLite store only). */
  logGate?: LogBacklogGate;
  /** Heartbeats to the control plane, when GATEWAY_CONTROL_PLANE_URL and GATEWAY_DEPLOYMENT_KEY are set. */
  heartbeat?: DeploymentHeartbeat;
  close(): Promise<void>;
}

/**
 * The whole gateway in one process: every route family, its stores (SQLite/folder under GATEWAY_DATA_DIR, or
 * MySQL shared with other processes: GATEWAY_STORE) and the queue worker loop. `npm start` runs this; the
 * end-to-end tests start it on a free port.
 */
export async function startLocalGateway(env: Record<string, string | undefined> = process.env): Promise<LocalGateway> {
  const settings = loadSettings(env);
  mkdirSync(settings.GATEWAY_DATA_DIR, { recursive: true });
  let listeningUrl: string | undefined;
  const publicBaseUrl = () => settings.GATEWAY_PUBLIC_URL ?? listeningUrl ?? `http://localhost:${settings.PORT}`;
  const secretRefs = new CachingSecretResolver(
    new LocalSecretResolver({
      env,
      envPrefix: settings.GATEWAY_SECRET_REF_ENV_PREFIX,
      filesDir: settings.GATEWAY_SECRET_FILES_DIR,
    }),
    settings.GATEWAY_SECRET_REF_CACHE_SECONDS * 1000,
  );
  // The store selection point: embedded (SQLite and a folder, one process) or MySQL (several processes).
  const { stores, tasks } =
    settings.GATEWAY_STORE === "mysql"
      ? await mysqlStores(settings, publicBaseUrl, secretRefs)
      : {
          stores: createLocalStores({
            dataDir: settings.GATEWAY_DATA_DIR,
            publicBaseUrl,
            vectorLimits: {
              maxEntries: settings.GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES,
              maxEntriesPerScope: settings.GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES_PER_SCOPE,
            },
            secretRefs,
          }),
          tasks: SCHEDULED_TASKS,
        };
  const services = createServices(settings, stores);
  services.consoleFiles = folderConsoleFiles();
  const checkThreads = settings.GATEWAY_GUARDRAIL_THREADS ?? defaultCheckThreads();
  const guardrailThreads = checkThreads > 0 ? new CheckThreadPool(checkThreads) : undefined;
  services.guardrailThreads = guardrailThreads;
  const bootstrap = await ensureOrganisation(stores.records, { adminKeySecret: settings.GATEWAY_BOOTSTRAP_ADMIN_KEY });

  const app = createApp({ families: ROUTE_FAMILIES, handlers: ALL_HANDLERS, services });
  const pending = new Set<Promise<unknown>>();
  // SQLite's request logs are written by the storage thread: new requests wait while it is far behind.
  const logGate =
    "logSink" in stores && stores.logSink instanceof ThreadLogSink
      ? new LogBacklogGate(stores.logSink.records)
      : undefined;
  const server = await startServer(app, {
    admit: logGate && (() => logGate.admit()),
    port: settings.PORT,
    host: settings.HOST,
    pending,
    maxHeaderBytes: settings.GATEWAY_MAX_HEADER_BYTES,
    bodyTimeoutMs: settings.GATEWAY_BODY_TIMEOUT_MS,
    // Realtime (WebSocket) sessions in the same process (core/inference/realtime), and the Responses WebSocket
    // mode, whose turns are this app's own `POST /v1/responses` (core/features/responses/websocket).
    upgrade: (waitUntil) =>
      createRealtimeUpgrade(services, {
        waitUntil,
        responses: (request, signal) => app(request, { waitUntil, signal, path: "/v1/responses" }),
      }),
  });
  listeningUrl = server.url;
  const worker = new WorkerLoop(services, QUEUE_CONSUMERS, {
    pollMs: settings.GATEWAY_WORKER_POLL_MS,
    visibilityTimeoutSeconds: settings.GATEWAY_QUEUE_VISIBILITY_SECONDS,
    concurrency: { batches: settings.GATEWAY_BATCH_WORKERS },
    tasks,
  });
  worker.start();
  const heartbeat =
    settings.GATEWAY_CONTROL_PLANE_URL && settings.GATEWAY_DEPLOYMENT_KEY
      ? startDeploymentHeartbeat({
          controlPlaneUrl: settings.GATEWAY_CONTROL_PLANE_URL,
          deploymentKey: settings.GATEWAY_DEPLOYMENT_KEY,
          intervalSeconds: settings.GATEWAY_DEPLOYMENT_HEARTBEAT_SECONDS,
          version: env.npm_package_version ?? "unknown",
          url: publicBaseUrl,
        })
      : undefined;

  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    services,
    bootstrap,
    worker,
    server,
    logGate,
    heartbeat,
    close() {
      closing ??= (async () => {
        heartbeat?.stop();
        await server.close();
        await worker.stop();
        await services.analytics.flush().catch((error) => console.error("analytics flush on shutdown failed", error));
        await guardrailThreads?.close();
        await stores.close();
      })();
      return closing;
    },
  };
}

/**
 * The MySQL stores (core/platform/mysql), loaded only when chosen, and the scheduled tasks claimed so that one
 * process at a time runs each.
 */
async function mysqlStores(
  settings: Settings,
  publicBaseUrl: () => string,
  secretRefs: SecretResolver,
): Promise<{ stores: Stores; tasks: ScheduledTask[] }> {
  const { mysqlStoresFromSettings } = await import("../mysql/mysql-config.ts");
  const stores = await mysqlStoresFromSettings(settings, { publicBaseUrl, secretRefs });
  return { stores, tasks: stores.claimTasks(SCHEDULED_TASKS) };
}
