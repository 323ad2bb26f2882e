import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDatabaseUrl } from "../../core/platform/mysql/database.ts";
import { type MariaDbServer, startMariaDb } from "../../scripts/mariadb.ts";
import { removeBuiltBundle } from "../helpers/bundle-gateway.ts";
import { call, type Replicas, startReplicas } from "../helpers/replicas.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * The spec's log-store breaker on the MySQL platform, end to end: two replicas write their request logs to a log
 * store of its own (LOG_STORE_DATABASE_URL, a MariaDB server of its own here), which hangs (SIGSTOP) for 30 s
 * while requests keep coming. No request fails; each replica's breaker opens after
 * LOG_STORE_CONNECTION_FAILURE_THRESHOLD failures in a row and stays open for LOG_STORE_CONNECTION_BACKOFF_MS
 * between tries; once the store answers, it closes and every log of the window is in the store.
 */

const OUTAGE_MS = 30_000;
const THRESHOLD = 5;
const BACKOFF_MS = 5_000;
const TIMEOUT_MS = 2_000;

let logServer: MariaDbServer;
let serverDir: string;
let logUrl: string;
let upstream: OpenAIMock;
let replicas: Replicas;

beforeAll(async () => {
  serverDir = mkdtempSync(join(tmpdir(), "log-store-e2e-"));
  logServer = await startMariaDb({ dir: join(serverDir, "server"), bufferPoolMb: 64 });
  logUrl = await logServer.createDatabase("logs");
  upstream = await startOpenAIMock();
  replicas = await startReplicas(2, {
    name: "log_outage",
    env: {
      LOG_STORE_DATABASE_URL: logUrl,
      LOG_STORE_CONNECTION_FAILURE_THRESHOLD: String(THRESHOLD),
      LOG_STORE_CONNECTION_BACKOFF_MS: String(BACKOFF_MS),
      LOG_STORE_CONNECTION_TIMEOUT_MS: String(TIMEOUT_MS),
    },
  });
}, 120_000);

afterAll(async () => {
  logServer?.resume();
  await replicas?.close();
  await upstream?.close();
  await logServer?.stop();
  rmSync(serverDir, { recursive: true, force: true });
  await removeBuiltBundle();
});

/** Requests from `clients` loops, alternating replicas, until `until` resolves; each with its own trace id. */
async function load(clients: number, until: Promise<unknown>) {
  let done = false;
  void until.then(() => {
    done = true;
  });
  const sent: Array<{ traceId: string; status: number; at: number }> = [];
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      for (let index = client; !done; index += clients) {
        const traceId = randomUUID();
        const answer = await call(
          replicas.gateways[index % 2]!,
          replicas.adminKey,
          "POST",
          "/v1/chat/completions",
          { model: "gpt-4o-mini", messages: [{ role: "user", content: `hello ${index}` }] },
          {
            "x-gateway-provider": "openai",
            authorization: "Bearer sk-upstream",
            "x-gateway-custom-host": `${upstream.url}/v1`,
            "x-gateway-trace-id": traceId,
          },
        );
        sent.push({ traceId, status: answer.status, at: Date.now() });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  return sent;
}

/** Output lines of one replica with the time the test saw them (polled every 50 ms while the test runs). */
function watch(replica: number) {
  const lines: Array<{ at: number; line: string }> = [];
  const timer = setInterval(() => {
    // The last piece is a line still being written (or empty).
    const complete = replicas.gateways[replica]!.output().split("\n").slice(0, -1);
    for (let index = lines.length; index < complete.length; index++)
      lines.push({ at: Date.now(), line: complete[index]! });
  }, 50);
  return { lines, stop: () => clearInterval(timer) };
}

describe("the log store down for 30 s under load", () => {
  it("fails no request, opens each breaker at the threshold, closes it after the backoff and keeps every log", {
    timeout: 180_000,
  }, async () => {
    const watchers = [watch(0), watch(1)];
    let pausedAt = 0;
    let resumedAt = 0;
    const outage = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      logServer.pause();
      pausedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
      logServer.resume();
      resumedAt = Date.now();
      // Traffic goes on a while after the store is back.
      await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS + TIMEOUT_MS + 3_000));
    })();
    const sent = await load(8, outage);
    await outage;

    // No request failed because of the log store.
    expect(sent.filter((request) => request.status !== 200)).toEqual([]);
    const inWindow = sent.filter((request) => request.at >= pausedAt && request.at <= resumedAt);
    expect(inWindow.length).toBeGreaterThan(100);

    // Every log is in the store once each replica has replayed its buffer.
    const connection = await mysql.createConnection({ ...parseDatabaseUrl(logUrl) });
    try {
      const stored = async () => {
        const [rows] = await connection.query("SELECT JSON_VALUE(data, '$.traceId') AS traceId FROM request_logs");
        return new Set((rows as Array<{ traceId: string }>).map((row) => row.traceId));
      };
      await expect
        .poll(
          async () => {
            const found = await stored();
            return sent.filter((request) => !found.has(request.traceId)).length;
          },
          // Replays go one backoff after the store answered, slower on a loaded machine.
          { timeout: 60_000, interval: 500 },
        )
        .toBe(0)
        .catch((error: Error) => {
          // What each replica said about its log store, to tell why logs are missing.
          const said = (replica: number) =>
            replicas.gateways[replica]!.output()
              .split("\n")
              .filter((line) => line.startsWith("log ") && !line.includes("write failed"))
              .slice(-20)
              .join("\n");
          throw new Error(`${error.message}\n--- replica 0\n${said(0)}\n--- replica 1\n${said(1)}`);
        });
    } finally {
      await connection.end();
    }

    for (const [replica, watcher] of watchers.entries()) {
      watcher.stop();
      const lines = watcher.lines;
      const opened = lines.findIndex(({ line }) => line.startsWith("log store failing"));
      expect(opened, `replica ${replica}'s breaker opened`).toBeGreaterThan(-1);
      expect(lines[opened]!.at).toBeGreaterThanOrEqual(pausedAt);
      // Exactly the threshold of failures in a row before it opened.
      const failures = lines.slice(0, opened).filter(({ line }) => line.startsWith("log store write failed"));
      expect(failures.map(({ line }) => line.match(/(\d+) in a row/)?.[1])).toEqual(
        Array.from({ length: THRESHOLD }, (_, index) => String(index + 1)),
      );
      // While the store is down the breaker is tried again only once a backoff has passed.
      const openings = lines.filter(({ line }) => line.startsWith("log store failing")).map(({ at }) => at);
      for (let index = 1; index < openings.length; index++) {
        expect(openings[index]! - openings[index - 1]!).toBeGreaterThanOrEqual(BACKOFF_MS - 100);
      }
      // Closed once the store answered: within a backoff (and a call) of its return, never before.
      const replayed = lines.find(({ line }) => line.startsWith("log store answering again"));
      expect(replayed, `replica ${replica} replayed its buffer`).toBeDefined();
      expect(replayed!.at).toBeGreaterThanOrEqual(resumedAt);
      expect(replayed!.at - resumedAt).toBeLessThanOrEqual(BACKOFF_MS + TIMEOUT_MS + 2_000);
    }
  });
});
