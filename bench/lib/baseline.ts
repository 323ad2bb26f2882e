import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

/**
 * `--baseline=DIR`: another checkout of this repository (a git worktree at the commit to compare with, its
 * node_modules installed or linked) whose gateway runs beside this one's in the same run. Every gateway target
 * then has a twin built from DIR; the cells of the two are measured back to back in every round, so a noisy
 * minute hits both, and the report gives the per-round paired differences (CPU per request, throughput).
 * "base" marks the twin's cells; this checkout's cells have no build mark.
 */
export type Build = "base" | undefined;

/**
 * Builds DIR's bench gateway the way its own scripts/build.ts builds it (its launcher, its Node flags: the
 * runner starts it with this run's), into a scratch folder of DIR. Returns the launcher's path and the folder (the
 * caller deletes it).
 */
export async function buildBaseline(dir: string): Promise<{ launcher: string; outdir: string }> {
  const script = join(dir, "scripts", "build.ts");
  if (!existsSync(script)) throw new Error(`--baseline: ${dir} has no scripts/build.ts`);
  const build = (await import(pathToFileURL(script).href)) as {
    buildLocal(outdir: string, entry: { name: string; source: string }): Promise<string>;
    scratchBuildDir(name: string): string;
  };
  const outdir = build.scratchBuildDir("bench-gateway-base");
  await build.buildLocal(outdir, { name: "gateway-server", source: "bench/gateway-server.ts" });
  return { launcher: join(outdir, "gateway-server.mjs"), outdir };
}
