import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { createLocalStores } from "../../core/platform/local/local-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { emulatorStores } from "../helpers/aws-stores.ts";
import { type TestMysqlStores, testMysqlStores } from "../helpers/mysql-stores.ts";
import { responseStoreContract } from "./responses.contract.ts";

/** The response store's contract on every store family: local (SQLite + folder), AWS (dynalite + fauxqs S3) and MySQL (MariaDB + S3). */

describe("local stores", () => {
  let dataDir: string;
  let stores: Stores;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "response-store-"));
    stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  });
  afterAll(async () => {
    await stores?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  responseStoreContract(() => stores);
});

describe("AWS stores (dynalite + fauxqs)", () => {
  let stores: Stores;
  beforeAll(() => {
    stores = emulatorStores(inject("emulators"));
  });
  afterAll(async () => {
    await stores?.close();
  });
  responseStoreContract(() => stores);
});

describe("MySQL stores (MariaDB + fauxqs S3)", () => {
  let opened: TestMysqlStores;
  beforeAll(async () => {
    opened = await testMysqlStores("responses");
  });
  afterAll(async () => {
    await opened?.close();
  });
  responseStoreContract(() => opened.stores);
});
