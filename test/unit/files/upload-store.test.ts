import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { createLocalStores } from "../../../core/platform/local/local-stores.ts";
import type { Stores } from "../../../core/store/ports.ts";
import { emulatorStores } from "../../helpers/aws-stores.ts";
import { uploadStoreSuite } from "./upload-store.suite.ts";

/** The upload store on both platforms' stores: local (SQLite + folder) and AWS (dynalite + fauxqs S3). */

describe("local stores", () => {
  let dataDir: string;
  let stores: Stores;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "upload-store-"));
    stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  });
  afterAll(async () => {
    await stores?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  uploadStoreSuite(() => stores);
});

describe("AWS stores (dynalite + fauxqs)", () => {
  let stores: Stores;
  beforeAll(() => {
    stores = emulatorStores(inject("emulators"));
  });
  afterAll(async () => {
    await stores?.close();
  });
  uploadStoreSuite(() => stores);
});
