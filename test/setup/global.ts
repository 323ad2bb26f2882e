/**
 * Vitest global setup: starts the AWS emulators once for the whole run and hands their endpoints to test
 * files through provide/inject (`inject("emulators")`). The shared MariaDB server is started by the first
 * file that needs it (test/setup/mariadb.ts) in a folder made here, and stopped here at the end.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { attachMariaDb, sharedServerDir } from "../../scripts/mariadb.ts";
import { type EmulatorEndpoints, startEmulators } from "./emulators.ts";

declare module "vitest" {
  interface ProvidedContext {
    emulators: EmulatorEndpoints;
    /** Where the shared MariaDB server lives once started, and the process it belongs to. */
    mariadb: { dir: string; ownerPid: number };
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulators = await startEmulators();
  project.provide("emulators", emulators.endpoints);
  const mariadbDir = mkdtempSync(join(tmpdir(), "gateway-mariadb-"));
  project.provide("mariadb", { dir: mariadbDir, ownerPid: process.pid });
  return async () => {
    await emulators.stop();
    await attachMariaDb(sharedServerDir(mariadbDir))?.stop();
    rmSync(mariadbDir, { recursive: true, force: true });
  };
}
