import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import * as esbuild from "esbuild";
import { type LambdaNodejsOptions, sstEsbuildOptions } from "../../infra/lambda-bundle.ts";
import { assertNoLazyCommonJs } from "../../scripts/build.ts";

/**
 * Lambda bundles exactly as SST builds them (one esbuild build per function with the options infra gives it,
 * infra/lambda-bundle.ts), kept in node_modules/.cache/lambda-bundles so that the Lambda bundle test and the AWS
 * shape, often in the same `npm test`, build each function once (46 builds take about a minute on two cores).
 *
 * A cached build is reused only while every file it was built from (esbuild's metafile inputs) has the same
 * content; its key also covers the esbuild version, the options, the entry, package-lock.json and tsconfig.json
 * (what changes how imports resolve without changing an input). Two processes that need the same bundle at once
 * take turns on a lock folder: one builds, the other then finds it built.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const CACHE_DIR = join(ROOT, "node_modules", ".cache", "lambda-bundles");
/** A lock older than this was left by a process that died while building. */
const STALE_LOCK_MS = 3 * 60_000;

interface Manifest {
  /** The entry chunk, relative to the bundle's folder. */
  entryFile: string;
  /** Input path (relative to the repository) -> sha256 of its content. */
  inputs: Record<string, string>;
}

const contentHashes = new Map<string, { mtimeMs: number; size: number; hash: string }>();

function hashOf(path: string): string | undefined {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch {
    return undefined;
  }
  const known = contentHashes.get(path);
  if (known && known.mtimeMs === stat.mtimeMs && known.size === stat.size) return known.hash;
  const hash = createHash("sha256").update(readFileSync(path)).digest("hex");
  contentHashes.set(path, { mtimeMs: stat.mtimeMs, size: stat.size, hash });
  return hash;
}

function keyOf(entry: string, options: esbuild.BuildOptions): string {
  return createHash("sha256")
    .update(JSON.stringify([esbuild.version, options, entry]))
    .update(hashOf(join(ROOT, "package-lock.json")) ?? "")
    .update(hashOf(join(ROOT, "tsconfig.json")) ?? "")
    .digest("hex")
    .slice(0, 32);
}

function validBuild(dir: string): string | undefined {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
  } catch {
    return undefined;
  }
  for (const [input, hash] of Object.entries(manifest.inputs)) {
    if (hashOf(join(ROOT, input)) !== hash) return undefined;
  }
  const entryFile = join(dir, manifest.entryFile);
  return existsSync(entryFile) ? entryFile : undefined;
}

async function build(entry: string, options: esbuild.BuildOptions, dir: string): Promise<string> {
  const scratch = `${dir}.build-${process.pid}`;
  rmSync(scratch, { recursive: true, force: true });
  const { metafile } = await esbuild.build({
    ...options,
    absWorkingDir: ROOT,
    entryPoints: [entry],
    outdir: scratch,
    metafile: true,
    logLevel: "silent",
  });
  assertNoLazyCommonJs(metafile);
  const output = Object.keys(metafile.outputs).find((file) => metafile.outputs[file]!.entryPoint === entry)!;
  const manifest: Manifest = {
    entryFile: resolve(ROOT, output).slice(scratch.length + 1),
    inputs: Object.fromEntries(Object.keys(metafile.inputs).map((input) => [input, hashOf(join(ROOT, input))!])),
  };
  writeFileSync(join(scratch, "manifest.json"), JSON.stringify(manifest));
  rmSync(dir, { recursive: true, force: true });
  renameSync(scratch, dir);
  return join(dir, manifest.entryFile);
}

/** Takes the lock folder of `dir` (waiting for another holder), runs `work`, releases it. */
async function withLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const lock = `${dir}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      } catch {
        // Released meanwhile.
      }
      await sleep(200);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** The entry chunk of `entry` bundled as SST bundles it with these `nodejs` options (built or taken from the cache). */
export async function sstBundle(entry: string, nodejs: LambdaNodejsOptions): Promise<string> {
  const options = sstEsbuildOptions(nodejs);
  mkdirSync(CACHE_DIR, { recursive: true });
  const dir = join(CACHE_DIR, keyOf(entry, options));
  const cached = validBuild(dir);
  if (cached) return cached;
  return withLock(dir, async () => validBuild(dir) ?? build(entry, options, dir));
}

/** Bundles several functions, a few at a time (esbuild uses every core for each build already). */
export async function sstBundles(
  functions: Array<{ entry: string; nodejs: LambdaNodejsOptions }>,
  parallel = 4,
): Promise<Map<string, string>> {
  const built = new Map<string, string>();
  const queue = [...new Map(functions.map((fn) => [fn.entry, fn])).values()];
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let next = queue.shift(); next; next = queue.shift())
        built.set(next.entry, await sstBundle(next.entry, next.nodejs));
    }),
  );
  return built;
}
