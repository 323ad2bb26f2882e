import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";
import { newBuildDir, publishBuild, removeUnusedBuilds } from "./build-folders.ts";

/**
 * Builds what `npm start` runs: the local gateway bundled into plain JavaScript (about a second), in a folder of
 * its own under dist/builds/, started by the launcher dist/main.mjs; a gateway already running from an earlier
 * build keeps its folder (scripts/build-folders.ts). Running the TypeScript sources directly makes Node load its
 * type stripper and keep every module's source in memory. The storage thread (WAL checkpoints, log writes), the
 * log reader thread (log searches) and the guardrail check thread are entry points of their own, emitted next to
 * the main bundle where storage-thread.ts, log-reader-thread.ts and check-threads.ts look for them.
 * better-sqlite3 stays a package import (native addon). The web console (console/, Vite) is built first, into
 * console/ next to the bundle, where the local gateway serves it from (core/platform/local/console-files.ts).
 */
const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const DIST_DIR = join(root, "dist");

/** A fresh folder for a throw-away build (tests, benchmarks): inside the repo, so package imports resolve. */
export function scratchBuildDir(name: string): string {
  const parent = join(root, "node_modules", ".cache");
  mkdirSync(parent, { recursive: true });
  return mkdtempSync(join(parent, `${name}-`));
}

/**
 * Builds into `<outdir>/builds/<id>/`, then points the launcher `<outdir>/<entry name>.mjs` at it and deletes the
 * builds no running process may still need. Returns the build's folder. `entry` names the main bundle's source
 * (the benchmark builds its own gateway server the same way).
 */
export async function buildLocal(
  outdir = DIST_DIR,
  entry: { name: string; source: string } = { name: "main", source: "core/platform/local/main.ts" },
): Promise<string> {
  const { id, dir } = newBuildDir(outdir);
  try {
    await bundleLocal(dir, entry);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  publishBuild(outdir, id, entry.name);
  removeUnusedBuilds(outdir, id);
  return dir;
}

async function bundleLocal(outdir: string, entry: { name: string; source: string }): Promise<void> {
  await buildConsole(join(outdir, "console"));
  const { metafile } = await esbuild.build({
    absWorkingDir: root,
    entryPoints: {
      [entry.name]: entry.source,
      "storage-worker": "core/platform/local/storage-worker.ts",
      "log-reader-worker": "core/platform/local/log-reader-worker.ts",
      "check-worker": "core/platform/node/check-worker.ts",
    },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node24",
    // No keepNames: it wraps every function created at run time (closures per request) in a helper call.
    external: ["better-sqlite3"],
    // Bundled CommonJS dependencies call require(): give the ESM output one.
    banner: {
      js: "import { createRequire as gatewayCreateRequire } from 'node:module'; const require = gatewayCreateRequire(import.meta.url);",
    },
    logLevel: "warning",
    metafile: true,
  });
  assertNoLazyCommonJs(metafile);
}

/** Where the web console's static files go (the local gateway serves them; infra/console.ts uploads them). */
export const CONSOLE_DIST_DIR = join(DIST_DIR, "console");

/**
 * Builds the web console (console/vite.config.ts) into `outdir`: index.html and content-hashed assets, every
 * dependency bundled (no CDN). Vite is loaded only here, so the server build's other users never pay for it.
 */
export async function buildConsole(outdir = CONSOLE_DIST_DIR): Promise<void> {
  const vite = await import("vite");
  await vite.build({
    configFile: join(root, "console", "vite.config.ts"),
    build: { outDir: outdir, emptyOutDir: true },
    logLevel: "warn",
  });
}

/**
 * npm's install step (`prepare`): builds the console so a fresh clone's `npm install && npm start` serves it. An
 * install without dev dependencies (`--omit=dev`) has no Vite: it says so and goes on rather than failing.
 */
async function prepareConsole(): Promise<void> {
  try {
    await import("vite");
  } catch {
    console.warn("Not building the web console: Vite is not installed (dev dependencies omitted).");
    return;
  }
  await buildConsole();
}

/** Where the realtime container service's bundle goes (services/realtime/Dockerfile builds it there too). */
export const REALTIME_DIST_DIR = join(root, "dist", "realtime");

/**
 * Builds the realtime container service (infra/realtime.ts): services/realtime/main.ts and everything it
 * imports in ONE file, `realtime.mjs`, so the image needs no node_modules (nothing it loads is native).
 */
export async function buildRealtimeService(outdir = REALTIME_DIST_DIR): Promise<string> {
  rmSync(outdir, { recursive: true, force: true });
  await esbuild.build({
    absWorkingDir: root,
    entryPoints: { realtime: "services/realtime/main.ts" },
    outdir,
    outExtension: { ".js": ".mjs" },
    bundle: true,
    splitting: false,
    format: "esm",
    platform: "node",
    target: "node24",
    // ws's optional native helpers: it falls back to JavaScript without them.
    external: ["bufferutil", "utf-8-validate"],
    banner: {
      js: "import { createRequire as gatewayCreateRequire } from 'node:module'; const require = gatewayCreateRequire(import.meta.url);",
    },
    logLevel: "warning",
  });
  return join(outdir, "realtime.mjs");
}

/**
 * Fails a build in which code loads a CommonJS module with `import()`: in a split bundle esbuild turns that
 * module into a chunk whose only export is `default`, so its named exports are undefined at run time (Bedrock
 * answered 500 under `npm start`, `SignatureV4 is not a constructor`, while the sources worked). Import such
 * packages statically from a module that is itself loaded lazily.
 */
export function assertNoLazyCommonJs(metafile: esbuild.Metafile): void {
  const offences: string[] = [];
  for (const [importer, input] of Object.entries(metafile.inputs)) {
    for (const record of input.imports) {
      if (record.kind === "dynamic-import" && !record.external && metafile.inputs[record.path]?.format === "cjs")
        offences.push(`${importer} imports ${record.original ?? record.path} (CommonJS) with import()`);
    }
  }
  if (offences.length > 0) {
    throw new Error(`Lazily loaded CommonJS loses its named exports in a split bundle:\n  ${offences.join("\n  ")}`);
  }
}

// `node scripts/build.ts` builds dist/ for npm start; `node scripts/build.ts realtime [outdir]` the container
// service; `node scripts/build.ts console [outdir]` only the web console (the AWS deploy); `prepare`: npm install.
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv[2] === "realtime") await buildRealtimeService(process.argv[3]);
  else if (process.argv[2] === "console") await buildConsole(process.argv[3]);
  else if (process.argv[2] === "prepare") await prepareConsole();
  else await buildLocal();
}
