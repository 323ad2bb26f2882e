import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { createLocalStores } from "../../core/platform/local/local-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { emulatorStores } from "../helpers/aws-stores.ts";
import { type TestMysqlStores, testMysqlStores } from "../helpers/mysql-stores.ts";
import { cacheStoreContract } from "./cache-store.contract.ts";

/** The cache store's contract on every store family: local (SQLite + folder), AWS (dynalite + fauxqs S3) and MySQL (MariaDB + S3). */

describe("local stores", () => {
  let dataDir: string;
  let stores: Stores;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "cache-store-"));
    stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  });
  afterAll(async () => {
    await stores?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  cacheStoreContract(() => stores);
});

describe("AWS stores (dynalite + fauxqs)", () => {
  let stores: Stores;
  beforeAll(() => {
    stores = emulatorStores(inject("emulators"));
  });
  afterAll(async () => {
    await stores?.close();
  });
  cacheStoreContract(() => stores);
});

describe("MySQL stores (MariaDB + fauxqs S3)", () => {
  let opened: TestMysqlStores;
  beforeAll(async () => {
    opened = await testMysqlStores("cache");
  });
  afterAll(async () => {
    await opened?.close();
  });
  cacheStoreContract(() => opened.stores);
});
