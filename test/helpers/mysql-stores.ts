import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { s3CompatibleBlobs } from "../../core/platform/aws/s3-compatible-blobs.ts";
import {
  createMysqlStores,
  type MysqlStores,
  type MysqlStoresOptions,
} from "../../core/platform/mysql/mysql-stores.ts";
import { TEST_CREDENTIALS } from "../setup/emulators.ts";
import { sharedMariaDb } from "../setup/mariadb.ts";

/** A database of its own on the test run's shared MariaDB server (test/setup/mariadb.ts). */
export async function testDatabaseUrl(name: string): Promise<string> {
  const server = await sharedMariaDb();
  return server.createDatabase(`${name}_${randomUUID().replaceAll("-", "").slice(0, 12)}`);
}

export interface TestMysqlStores {
  stores: MysqlStores;
  url: string;
  /** The same database, as another gateway process would open it (its own pools, buffer and leases). */
  another(): Promise<MysqlStores>;
  close(): Promise<void>;
}

/**
 * The MySQL stores on a fresh database of the shared server, blobs on the emulators' S3 (fauxqs, path-style:
 * the S3-compatible adapter), the log buffer in a temporary folder, a fresh master key.
 */
export async function testMysqlStores(
  name: string,
  overrides: Partial<MysqlStoresOptions> = {},
): Promise<TestMysqlStores> {
  const url = await testDatabaseUrl(name);
  const emulators = inject("emulators");
  const masterKey = randomBytes(32);
  const opened: Array<{ stores: MysqlStores; dir: string }> = [];
  const open = async () => {
    const dir = mkdtempSync(join(tmpdir(), `${name}-buffer-`));
    const s3 = s3CompatibleBlobs({
      bucket: emulators.bucketName,
      endpoint: emulators.fauxqs,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: TEST_CREDENTIALS,
    });
    const stores = await createMysqlStores({
      database: { url, poolSize: 12 },
      logStore: { threshold: 5, backoffMs: 60_000, timeoutMs: 15_000 },
      logBuffer: { dir, maxBytes: 64 * 1024 * 1024 },
      blobs: s3.blobs,
      closeBlobs: s3.close,
      masterKey,
      vectorLimits: { maxEntries: 100_000, maxEntriesPerScope: 100_000 },
      ...overrides,
    });
    opened.push({ stores, dir });
    return stores;
  };
  const stores = await open();
  return {
    stores,
    url,
    another: open,
    async close() {
      for (const { stores: each, dir } of opened.splice(0)) {
        await each.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
