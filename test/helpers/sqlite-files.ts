import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

/** Temp folders made by a test file; `removeAll()` (in afterEach) deletes them. */
export function tempDirs(prefix: string) {
  const dirs: string[] = [];
  return {
    make(): string {
      const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
      dirs.push(dir);
      return dir;
    },
    removeAll(): void {
      for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What a second connection finds committed in a SQLite file: what another process (or a crash) would see. */
export function committed(file: string, sql: string): unknown[] {
  const reader = new Database(file, { readonly: true });
  try {
    return reader.prepare(sql).all();
  } finally {
    reader.close();
  }
}
