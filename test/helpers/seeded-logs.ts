import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { workspaceStore } from "../../core/control/workspaces.ts";
import type { RequestLog } from "../../core/logs/log-record.ts";
import { startLocalGateway } from "../../core/platform/local/gateway.ts";

/**
 * A data folder holding many request logs, seeded straight through the platform's log sink (as the gateway
 * writes them, but without an HTTP request each): for tests and measurements of log search at scale. The
 * organisation has two workspaces, A and B, with a service key each (scopes `*`); log i is A's when i % 3 is 0,
 * else B's; newest last, spread over the last `spanDays` days.
 */
export interface SeededLogs {
  dataDir: string;
  adminKey: string;
  organisationId: string;
  a: { workspaceId: string; key: string; keyId: string };
  b: { workspaceId: string; key: string; keyId: string };
}

/** The models, providers and statuses the seeded logs draw from (none of them is `nope`). */
export const SEEDED_MODELS = ["gpt-4o-mini", "gpt-4o", "claude-3-5-sonnet", "mistral-large"];
export const SEEDED_PROVIDERS = ["openai", "anthropic", "mistral"];

/**
 * Searches of workspace A that read as much of the log index as a call may: filters no seeded log matches, a
 * cost bound no index holds, two conditions together (issue 38: what a hostile or merely busy console sends).
 */
export const HEAVY_SEARCHES = [
  "?limit=10&model=nope",
  "?limit=100&min_cost=999",
  "?limit=100&status=503",
  "?limit=100&model=gpt-4o&status=503",
  "?limit=100&provider=openai&max_cost=0",
  "?limit=25&metadata_key=team&metadata_value=team-3&min_cost=1",
  "?limit=100&trace_id=no-such-trace",
];

/** Logs written at once: the local sink refuses writes when its thread is too far behind (MAX_WAITING). */
const WAVE = 1000;

export async function seedLogsDataDir(count: number, options: { spanDays?: number } = {}): Promise<SeededLogs> {
  const dataDir = mkdtempSync(join(tmpdir(), "gateway-seeded-logs-"));
  const gateway = await startLocalGateway({
    PORT: "0",
    HOST: "127.0.0.1",
    GATEWAY_DATA_DIR: dataDir,
    TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost",
  });
  try {
    const { records, logSink } = gateway.services.stores;
    const { organisationId, defaultWorkspaceId, adminApiKey } = gateway.bootstrap;
    const workspaceB = await workspaceStore(records).create(organisationId, {
      slug: `tenant-b-${Date.now()}`,
      name: "Tenant B",
      description: null,
      defaults: {},
    });
    const key = async (workspaceId: string, name: string) => {
      const { id, secret } = await createApiKey(records, {
        organisationId,
        workspaceId,
        name,
        keyType: "workspace",
        keySubType: "service",
        scopes: ["*"],
      });
      return { workspaceId, key: secret, keyId: id };
    };
    const a = await key(defaultWorkspaceId, "tenant-a");
    const b = await key(workspaceB.id, "tenant-b");
    const span = (options.spanDays ?? 7) * 86_400_000;
    const start = Date.now() - span;
    for (let first = 0; first < count; first += WAVE) {
      const writes: Array<Promise<void>> = [];
      for (let i = first; i < Math.min(count, first + WAVE); i++) {
        const owner = i % 3 === 0 ? a : b;
        const log = seededLog(i, organisationId, owner, start + Math.floor((span * i) / count));
        writes.push(logSink.write({ log, retentionDays: 30, bodiesSize: 200 }));
      }
      await Promise.all(writes);
    }
    return { dataDir, adminKey: adminApiKey!, organisationId, a, b };
  } finally {
    await gateway.close();
  }
}

function seededLog(
  i: number,
  organisationId: string,
  owner: { workspaceId: string; keyId: string },
  timeMs: number,
): RequestLog {
  const model = SEEDED_MODELS[i % SEEDED_MODELS.length]!;
  return {
    id: `log_seed${String(i).padStart(9, "0")}`,
    createdAt: new Date(timeMs).toISOString(),
    traceId: `trace-seed-${i}`,
    organisationId,
    workspaceId: owner.workspaceId,
    apiKeyId: owner.keyId,
    metadata: { team: `team-${i % 10}`, _user: `user-${i % 1000}` },
    method: "POST",
    route: "/v1/chat/completions",
    path: "/v1/chat/completions",
    status: i % 50 === 0 ? 429 : 200,
    provider: SEEDED_PROVIDERS[i % SEEDED_PROVIDERS.length],
    requestedModel: model,
    answeredModel: `${model}-2025-01-01`,
    latencyMs: 100 + (i % 400),
    usage: { promptTokens: 12, completionTokens: 30, totalTokens: 42, estimated: false },
    cost: (i % 100) / 100_000,
    headers: { "content-type": "application/json", authorization: "[masked]", "user-agent": "seed" },
    requestBody: { model, messages: [{ role: "user", content: `question ${i}` }] },
    responseBody: { id: `chatcmpl-${i}`, object: "chat.completion", model },
    source: "gateway",
  };
}
