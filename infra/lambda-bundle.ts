import type { BuildOptions } from "esbuild";

/**
 * How every gateway Lambda is bundled: the `nodejs` options infra/ hands to sst.aws.Function, and the esbuild
 * options SST derives from them (SST 3/4, pkg/runtime/node/build.go). The benchmark (bench/bundle-size.ts) and
 * the Lambda bundle test (test/lambda/bundles.test.ts) build from `sstEsbuildOptions(LAMBDA_NODEJS)`, so what is
 * measured and tested is what is deployed. This module imports nothing at run time (SST evaluates it).
 */

/** The `nodejs` block of every gateway function: ESM, minified, code splitting, for Node 24. */
export const LAMBDA_NODEJS = {
  format: "esm",
  minify: true,
  // Code splitting keeps what only some requests need (the tokenizer's rank tables, Bedrock's signer and
  // event-stream codec) in chunks loaded on first use instead of in every cold start.
  splitting: true,
  // SST's default target is esnext; the runtime is Node 24.
  esbuild: { target: "node24" },
} as const;

export type LambdaNodejsOptions = {
  format?: "esm" | "cjs";
  minify?: boolean;
  splitting?: boolean;
  esbuild?: { target?: string; external?: readonly string[] };
};

/** The banner SST puts on ESM bundles: bundled CommonJS code gets require, __filename and __dirname. */
export const SST_BANNER = [
  `import { createRequire as topLevelCreateRequire } from 'module';`,
  `const require = topLevelCreateRequire(import.meta.url);`,
  `import { fileURLToPath as topLevelFileUrlToPath, URL as topLevelURL } from "url"`,
  `const __filename = topLevelFileUrlToPath(import.meta.url)`,
  `const __dirname = topLevelFileUrlToPath(new topLevelURL(".", import.meta.url))`,
].join("\n");

/** Packages SST always leaves out of the bundle (native addons); `@aws-sdk/*` is bundled. */
export const SST_EXTERNALS = ["sharp", "pg-native"] as const;

/**
 * The esbuild options SST uses for a function with these `nodejs` options (entry points and output folder
 * excluded): bundle, platform node, keepNames, mainFields module then main, the banner, SST's externals plus
 * the function's own.
 */
export function sstEsbuildOptions(nodejs: LambdaNodejsOptions = LAMBDA_NODEJS): BuildOptions {
  const esm = (nodejs.format ?? "esm") === "esm";
  return {
    bundle: true,
    minify: nodejs.minify ?? true,
    format: esm ? "esm" : "cjs",
    platform: "node",
    target: nodejs.esbuild?.target ?? "esnext",
    keepNames: true,
    mainFields: ["module", "main"],
    external: [...SST_EXTERNALS, ...(nodejs.esbuild?.external ?? [])],
    ...(esm ? { banner: { js: SST_BANNER }, splitting: nodejs.splitting ?? false } : {}),
    outExtension: { ".js": esm ? ".mjs" : ".js" },
    sourcemap: false,
  };
}
