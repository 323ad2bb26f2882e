import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { createLocalStores, type LocalStores } from "../../core/platform/local/local-stores.ts";
import { controlContract } from "./control.contract.ts";
import { policiesContract } from "./policies.contract.ts";

let dataDir: string;
let stores: LocalStores;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-policies-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
});

afterAll(async () => {
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("local stores (SQLite)", () => {
  policiesContract(() => stores);
  describe("control-plane storage", () => controlContract(() => stores));
});
