import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { createLocalStores } from "../../core/platform/local/local-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { emulatorStores } from "./aws-stores.ts";

/** Runs `suite` on both platforms' stores: local (SQLite + folder) and AWS (dynalite + fauxqs S3 and SQS). */
export function onBothStoreFamilies(name: string, suite: (stores: () => Stores) => void): void {
  describe("local stores", () => {
    let dataDir: string;
    let stores: Stores;
    beforeAll(() => {
      dataDir = mkdtempSync(join(tmpdir(), `${name}-`));
      stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
    });
    afterAll(async () => {
      await stores?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    suite(() => stores);
  });

  describe("AWS stores (dynalite + fauxqs)", () => {
    let stores: Stores;
    beforeAll(() => {
      stores = emulatorStores(inject("emulators"));
    });
    afterAll(async () => {
      await stores?.close();
    });
    suite(() => stores);
  });
}
