/**
 * The test run's shared MariaDB server (scripts/mariadb.ts), started by the first test file that asks for it
 * and stopped by the global teardown (test/setup/global.ts): a run whose files never ask starts nothing. Test
 * files run in several worker processes, so the first to create the lock folder starts the server; the others
 * wait until it is ready and attach to it.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { inject } from "vitest";
import { attachMariaDb, type MariaDbServer, sharedServerDir, startMariaDb } from "../../scripts/mariadb.ts";

let shared: Promise<MariaDbServer> | undefined;

/** The shared server, started on first use; `createDatabase` gives each test file a database of its own. */
export function sharedMariaDb(): Promise<MariaDbServer> {
  shared ??= startOrAttach();
  return shared;
}

async function startOrAttach(): Promise<MariaDbServer> {
  const { dir, ownerPid } = inject("mariadb");
  const failure = join(dir, "failed");
  let owner = false;
  try {
    mkdirSync(join(dir, "lock"));
    owner = true;
  } catch {
    // another worker is starting it
  }
  if (owner) {
    try {
      return await startMariaDb({ dir: sharedServerDir(dir), ownerPid });
    } catch (error) {
      writeFileSync(failure, (error as Error).message);
      throw error;
    }
  }
  const deadline = Date.now() + 90_000;
  for (;;) {
    const server = attachMariaDb(sharedServerDir(dir));
    if (server) return server;
    if (existsSync(failure)) throw new Error(readFileSync(failure, "utf8"));
    if (Date.now() > deadline) throw new Error("the shared MariaDB server did not start in 90 s");
    await sleep(100);
  }
}
