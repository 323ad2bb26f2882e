import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Where a build of the local gateway goes, so that building never pulls files out from under a gateway already
 * running from the same folder. A running process has loaded its entry, but loads the chunks of lazily loaded
 * routes by path when they are first used: deleting or replacing them made `npm start` in a second terminal turn
 * every such route of the first gateway into 500 ERR_MODULE_NOT_FOUND until it restarted.
 *
 * So each build gets a folder of its own, `<outdir>/builds/<id>/`, and `<outdir>/<entry>.mjs` is a small launcher
 * that starts the newest build; it is replaced by a rename, which a reader sees whole or not at all. A process
 * keeps the folder it started from (Node resolves its chunks from there, whatever the launcher says later), and
 * marks it in use with a file named after its pid (`.running/<pid>`, removed when it exits). Later builds delete a
 * folder only when it is not among the two newest and no live process marked it: the newest for the next start,
 * the one before for a process that read the launcher just before it changed.
 */

const BUILDS = "builds";
const RUNNING = ".running";
/** Builds kept whatever their markers say: the newest (the launcher's) and the one before. */
const KEPT_NEWEST = 2;

/** A fresh, empty folder for the next build: names sort by creation time. */
export function newBuildDir(outdir: string): { id: string; dir: string } {
  const id = `${Date.now().toString(36).padStart(9, "0")}-${randomBytes(4).toString("hex")}`;
  const dir = join(outdir, BUILDS, id);
  mkdirSync(dir, { recursive: true });
  return { id, dir };
}

/** Points `<outdir>/<entry>.mjs` at build `id`, atomically (a rename over the previous launcher). */
export function publishBuild(outdir: string, id: string, entry: string): void {
  const build = `./${BUILDS}/${id}`;
  const launcher = `// Written by scripts/build.ts: starts build ${id} (see scripts/build-folders.ts).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
const running = new URL("${build}/${RUNNING}/", import.meta.url);
mkdirSync(running, { recursive: true });
const marker = new URL(String(process.pid), running);
writeFileSync(marker, "");
process.on("exit", () => rmSync(marker, { force: true }));
await import("${build}/${entry}.mjs");
`;
  const path = join(outdir, `${entry}.mjs`);
  const staged = `${path}.${process.pid}.tmp`;
  writeFileSync(staged, launcher);
  renameSync(staged, path);
}

/** Deletes the builds no process may still load from (see the module comment); `keep` is never deleted. */
export function removeUnusedBuilds(outdir: string, keep: string): void {
  const root = join(outdir, BUILDS);
  if (!existsSync(root)) return;
  const ids = readdirSync(root).sort().reverse();
  for (const [index, id] of ids.entries()) {
    if (id === keep || index < KEPT_NEWEST || inUse(join(root, id))) continue;
    rmSync(join(root, id), { recursive: true, force: true });
  }
}

/** Whether a live process marked the build (a pid reused since is read as live: the build is merely kept). */
function inUse(dir: string): boolean {
  const markers = join(dir, RUNNING);
  if (!existsSync(markers)) return false;
  return readdirSync(markers).some((name) => /^\d+$/.test(name) && alive(Number(name)));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user holds the pid; it is alive all the same.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
