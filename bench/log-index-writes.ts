/**
 * What the log search index costs the storage thread: `node bench/log-index-writes.ts [--logs=50000]`. Inserts
 * the same request logs into a fresh logs.db in write batches of 50 (as the storage thread commits them), once
 * as records alone and once with their search index (core/platform/local/sqlite-log-index.ts), and prints the
 * CPU per log and the file size of each. A script, not a test: it reports, never fails on a timing.
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { v7 as timeOrderedUuid } from "uuid";
import { layoutLog } from "../core/observe/logs/log-layout.ts";
import type { RequestLog } from "../core/observe/logs/log-record.ts";
import { logFacts } from "../core/observe/logs/log-search.ts";
import { LOG_PAGE_CACHE_KIB, openDatabase } from "../core/platform/local/sqlite.ts";
import { SqliteLogIndex } from "../core/platform/local/sqlite-log-index.ts";
import { SqliteRecords, storedRow } from "../core/platform/local/sqlite-records.ts";
import { WriteBatcher } from "../core/platform/local/write-batcher.ts";

const { values } = parseArgs({ options: { logs: { type: "string", default: "50000" } } });
const count = Number(values.logs);
const BATCH = 50;

const workspaces = ["ws_01jz8x2k3m4n5p6q7r8s9aaa", "ws_01jz8x2k3m4n5p6q7r8s9bbb", "ws_01jz8x2k3m4n5p6q7r8s9ccc"];
const start = Date.now() - count * 10;
const logs: RequestLog[] = Array.from({ length: count }, (_, i) => ({
  id: `log_${(start + i * 10).toString(32)}${String(i).padStart(12, "0")}`,
  createdAt: new Date(start + i * 10).toISOString(),
  // As the gateway makes them when the caller sends none (core/http/gateway-headers.ts).
  traceId: timeOrderedUuid(),
  organisationId: "org_01jz8x2k3m4n5p6q7r8s9t0v",
  workspaceId: workspaces[i % 3],
  apiKeyId: `key_01jz8x2k3m4n5p6q7r8s9${i % 7}`,
  metadata: { team: `team-${i % 5}`, _user: `user-${i % 500}` },
  method: "POST",
  route: "/v1/chat/completions",
  path: "/v1/chat/completions",
  status: i % 20 ? 200 : 429,
  provider: ["openai", "anthropic"][i % 2],
  requestedModel: `model-${i % 4}`,
  answeredModel: `model-${i % 4}-2025-01-01`,
  latencyMs: 120,
  usage: { promptTokens: 10, completionTokens: 20, totalTokens: 30, estimated: false },
  cost: 0.0001,
  headers: { "content-type": "application/json", "user-agent": "OpenAI/JS 5.0", authorization: "[masked]" },
  requestBody: { model: "m", messages: [{ role: "user", content: "hello ".repeat(50) }] },
  responseBody: { id: "x", object: "chat.completion", choices: [{ message: { content: "hi ".repeat(100) } }] },
  source: "gateway",
}));

function run(indexed: boolean) {
  const dir = mkdtempSync(join(tmpdir(), "log-index-writes-"));
  const file = join(dir, "logs.db");
  const db = openDatabase(file, LOG_PAGE_CACHE_KIB);
  const writes = new WriteBatcher(db);
  const records = new SqliteRecords(db, writes);
  const index = indexed ? new SqliteLogIndex(db, writes) : undefined;
  // Laid out and serialised beforehand: that part is the same either way (and partly on the event loop).
  const rows = logs.map((log) => storedRow(layoutLog({ log, retentionDays: 30, bodiesSize: 1000 }).item));
  const facts = logs.map(logFacts);
  const cpu = process.cpuUsage();
  for (let i = 0; i < count; i++) {
    void records.putRow(rows[i]!);
    index?.add(facts[i]!, rows[i]!.ttl ?? undefined);
    if (i % BATCH === BATCH - 1) writes.flush();
  }
  writes.flush();
  const used = process.cpuUsage(cpu);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  const size = statSync(file).size;
  rmSync(dir, { recursive: true, force: true });
  return { microseconds: (used.user + used.system) / count, megabytes: size / 1e6 };
}

// Alternated, so a busy neighbour on the machine weighs on both alike.
const plain: number[] = [];
const withIndex: number[] = [];
let sizes = { plain: 0, indexed: 0 };
for (let round = 0; round < 3; round++) {
  const a = run(false);
  const b = run(true);
  plain.push(a.microseconds);
  withIndex.push(b.microseconds);
  sizes = { plain: a.megabytes, indexed: b.megabytes };
}
const median = (list: number[]) => [...list].sort((x, y) => x - y)[1]!;
console.log(
  `${count} logs, batches of ${BATCH}: records alone ${median(plain).toFixed(1)} µs CPU/log (${sizes.plain.toFixed(0)} MB), ` +
    `with the search index ${median(withIndex).toFixed(1)} µs CPU/log (${sizes.indexed.toFixed(0)} MB)`,
);
