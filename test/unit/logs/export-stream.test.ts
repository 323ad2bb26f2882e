import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadSettings } from "../../../core/config/settings.ts";
import { logExportStore } from "../../../core/exports/log-exports.ts";
import { consumeExports, exportBlobKey } from "../../../core/exports/worker.ts";
import type { RequestLog } from "../../../core/logs/log-record.ts";
import { createLocalStores, type LocalStores } from "../../../core/platform/local/local-stores.ts";
import { createServices, type Services } from "../../../core/services.ts";
import { tempDirs } from "../../helpers/sqlite-files.ts";

const temp = tempDirs("gateway-export-stream");
let stores: LocalStores;
let services: Services;
const ORG = "org_export";
const LOGS = 250;

beforeAll(async () => {
  const dataDir = temp.make();
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  services = createServices(loadSettings({ GATEWAY_DATA_DIR: dataDir }), stores);
  const start = Date.now() - 60_000;
  for (let i = 0; i < LOGS; i++) {
    const log: RequestLog = {
      id: `log_${String(i).padStart(5, "0")}`,
      createdAt: new Date(start + i * 10).toISOString(),
      traceId: `trace-${i}`,
      organisationId: ORG,
      workspaceId: i % 5 === 0 ? "ws_other" : "ws_export",
      method: "POST",
      route: "/v1/chat/completions",
      path: "/v1/chat/completions",
      status: 200,
      latencyMs: 1,
      requestBody: { n: i },
      source: "gateway",
    };
    expect(await services.logger.write(log, 30, 20)).toBe(true);
  }
});

afterAll(async () => {
  await stores.close();
  temp.removeAll();
});

async function queuedExport(requestedData: string[]) {
  const store = logExportStore(stores.records);
  const created = await store.create(ORG, {
    workspaceId: "ws_export",
    description: null,
    filters: {},
    requestedData,
    status: "draft",
    createdBy: {},
  });
  return store.update(created, { status: "queued" });
}

const message = (exportId: string) => ({
  id: exportId,
  receipt: exportId,
  attempts: 1,
  body: { exportId, organisationId: ORG },
});

describe("log exports", () => {
  it("stream every page of the workspace's logs into the blob, bodies read by id", async () => {
    const queued = await queuedExport(["id", "workspace_id", "request"]);
    expect(await consumeExports([message(queued.id)], services)).toEqual({ failedIds: [] });
    const done = await logExportStore(stores.records).get(ORG, queued.id);
    expect(done).toMatchObject({ status: "success", lineCount: 200 });
    const blob = await stores.blobs.get(exportBlobKey(queued));
    const lines = (await new Response(blob!.body).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(200);
    expect(new Set(lines.map((line) => line.workspace_id))).toEqual(new Set(["ws_export"]));
    expect(lines[0]).toEqual({ id: "log_00249", workspace_id: "ws_export", request: { n: 249 } });
  });

  it("writes nothing when the export is cancelled while it streams", async () => {
    const queued = await queuedExport(["id"]);
    const store = logExportStore(stores.records);
    const list = services.logger.list.bind(services.logger);
    const spy = vi.spyOn(services.logger, "list").mockImplementation(async (...args) => {
      const page = await list(...args);
      const current = await store.get(ORG, queued.id);
      if (current?.status === "running") await store.update(current, { status: "cancelled" });
      return page;
    });
    try {
      expect(await consumeExports([message(queued.id)], services)).toEqual({ failedIds: [] });
    } finally {
      spy.mockRestore();
    }
    expect(await store.get(ORG, queued.id)).toMatchObject({ status: "cancelled" });
    expect(await stores.blobs.head(exportBlobKey(queued))).toBeUndefined();
  });
});
