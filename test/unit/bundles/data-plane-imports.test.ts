import { resolve } from "node:path";
import { build, type Metafile } from "esbuild";
import { beforeAll, describe, expect, it } from "vitest";
import { initChunks } from "../../../bench/lib/init-chunks.ts";
import { ROUTE_FAMILIES } from "../../../core/routes/table.ts";

/**
 * What a data-plane Lambda loads at init (its cold start, spec 8: < 60 ms): the entry chunk and the chunks it
 * imports statically, bundled as deployed (esbuild with code splitting, as bench/bundle-size.ts and infra/ do;
 * minifying is left out, it changes no module graph). Modules loaded on first use (dynamic imports) are fine.
 * Kept out of init: classic zod (~100 KB, ~17 ms to import; the request schemas use `zod/mini`), the control
 * plane's schemas (`core/control/**\/*schemas.ts`, the MCP and SSO ones), the policy request schemas
 * (core/inference/policies/requests.ts), and the semantic cache's S3 Vectors client and adapter (and usearch,
 * local only), the guardrail engine, the model catalog's price data, the multipart parser, the other families'
 * routes, analytics counting and the OpenTelemetry API. The queue and schedule workers keep the catalog out too.
 */

const ROOT = resolve(import.meta.dirname, "../../..");

/** `except`: the families that need it at init. */
const FORBIDDEN: Array<{ what: string; test: (input: string) => boolean; except?: string[] }> = [
  { what: "classic zod", test: (input) => /node_modules\/zod\/(v4\/classic|v3)\//.test(input) },
  {
    what: "control-plane schemas",
    test: (input) =>
      /^core\/(control\/.*schemas|features\/mcp\/(integrations|servers)\/schemas|identity\/sso\/schemas)\.ts$/.test(
        input,
      ),
  },
  { what: "policy request schemas", test: (input) => input === "core/inference/policies/requests.ts" },
  // The semantic cache's vector index loads its client on first use (aws-stores.ts lazyPort).
  { what: "the S3 Vectors client", test: (input) => input.includes("node_modules/@aws-sdk/client-s3vectors/") },
  { what: "the S3 Vectors adapter", test: (input) => input === "core/platform/aws/s3-vectors-index.ts" },
  { what: "usearch", test: (input) => input.includes("node_modules/usearch/") },
  // Guardrails: only their resolution (core/inference/guardrails/pipeline.ts, resolve.ts) is on the request path; the
  // runner, the checks and what they load come with a request's first guardrail.
  {
    what: "the guardrail engine",
    test: (input) =>
      /^core\/inference\/guardrails\/(runner|phases|denial|stream-output|texts|check-environment|check-inference|outbound-json|spans)\.ts$/.test(
        input,
      ) || input.startsWith("core/inference/guardrails/checks/"),
  },
  { what: "re2js", test: (input) => input.includes("node_modules/re2js/") },
  // The model catalog and its price data (~230 KB) come with the first request that prices usage or lists models
  // (core/inference/catalog/load.ts), whatever package provides the prices.
  {
    what: "the catalog's price data",
    test: (input) =>
      /node_modules\/(@tokenlens|@pydantic\/genai-prices)\//.test(input) ||
      input === "core/inference/catalog/catalog.ts",
  },
  // A function serves its own family: the route table's index (every family) and analytics counting (done by
  // the stream worker on AWS; it reads the whole table) stay out.
  { what: "the whole route table", test: (input) => input === "core/routes/table.ts" },
  {
    what: "analytics counting",
    test: (input) =>
      input === "core/observe/analytics/counting.ts" || input === "core/observe/analytics/cell-groups.ts",
  },
  // Multipart bodies (busboy) come with a multipart inference route's first request (core/inference/gateway/inference.ts);
  // file uploads are what the files family is for.
  { what: "busboy", test: (input) => input.includes("node_modules/busboy/"), except: ["files"] },
  // The generation spans (and the OpenTelemetry API, 16 KB) come with the first inference log
  // (core/observe/metrics/observe.ts); guardrail spans with a guardrail run.
  { what: "the OpenTelemetry API", test: (input) => input.includes("node_modules/@opentelemetry/api/") },
  { what: "the generation spans", test: (input) => input === "core/observe/metrics/generation-span.ts" },
  // Streams that may be continued (on_stream_failure: continue) load their checks with the first of them
  // (core/inference/gateway/stream/pipelines.ts loadStrictStreams); the continuation itself comes with a break.
  { what: "the strict stream checks", test: (input) => input === "core/inference/gateway/stream/strict-streams.ts" },
  // Azure's adapters come with its first request (core/providers/registry.ts), as every provider family with
  // transforms of its own; only its endpoints (shared with files, batches and fine-tuning) may be loaded.
  {
    what: "the Azure family",
    test: (input) => input.startsWith("core/providers/azure/") && input !== "core/providers/azure/endpoints.ts",
  },
  // Request-dependent parts of the OpenAI-compatible table: Mistral's moderation shapes come with its first
  // moderation (core/providers/mistral/moderations-route.ts), the subtitle writers with the first request for SRT
  // or WebVTT (core/providers/audio/subtitles-from-segments.ts).
  { what: "Mistral's moderation shapes", test: (input) => input === "core/providers/mistral/moderations.ts" },
  { what: "the transcript writers", test: (input) => input === "core/providers/audio/transcript.ts" },
  // Responses: background runs come with the first background response, cancel or delete; input-item pages with
  // the first listing (core/features/responses/create-response.ts loadBackground, response-store.ts).
  {
    what: "the responses' background runs and input-item pages",
    test: (input) =>
      input === "core/features/responses/background.ts" || input === "core/features/responses/input-item-page.ts",
  },
  // Saved prompts: the renderer and mustache come with a prompt route's first request (core/features/prompts/runtime.ts).
  { what: "mustache", test: (input) => input.includes("node_modules/mustache/") },
  {
    what: "the prompt runtime",
    test: (input) => input.startsWith("core/features/prompts/") && input !== "core/features/prompts/metadata.ts",
  },
];

// Lambda entries only: container families (the realtime service) have no functions/ entry.
const DATA_PLANE = ROUTE_FAMILIES.filter(
  (family) => family.dataPlane && (family.platform ?? "lambda") === "lambda",
).map((family) => family.name);

/**
 * The inputs (repo-relative paths) of the chunks each entry loads at init. One build for all entries (ten times
 * faster than one each): esbuild puts a module in a chunk by the set of entries that reach it statically, so
 * the chunks an entry imports statically hold exactly its static import graph, as in a build of its own.
 */
async function initInputs(entries: string[]): Promise<Map<string, string[]>> {
  const { metafile } = await build({
    absWorkingDir: ROOT,
    entryPoints: entries,
    bundle: true,
    write: false,
    metafile: true,
    splitting: true,
    outdir: "out",
    outExtension: { ".js": ".mjs" },
    format: "esm",
    platform: "node",
    target: "node24",
    mainFields: ["module", "main"],
    external: ["sharp", "pg-native"],
    logLevel: "silent",
  });
  const outputs: Metafile["outputs"] = metafile.outputs;
  const result = new Map<string, string[]>();
  for (const entry of entries) {
    const entryOutput = Object.keys(outputs).find((output) => outputs[output]!.entryPoint === entry);
    if (!entryOutput) throw new Error(`no output chunk for ${entry}`);
    const loaded = initChunks(outputs, entryOutput);
    result.set(entry, [...new Set(loaded.flatMap((output) => Object.keys(outputs[output]!.inputs)))]);
  }
  return result;
}

const WORKERS = ["functions/workers/batches.ts", "functions/workers/exports.ts", "functions/workers/scheduled.ts"];

describe("data-plane functions: what init loads", () => {
  let inputs = new Map<string, string[]>();
  beforeAll(async () => {
    inputs = await initInputs([...DATA_PLANE.map((name) => `functions/${name}.ts`), ...WORKERS]);
  });

  for (const entry of WORKERS) {
    it(`${entry} does not load the catalog's price data at init`, () => {
      const loaded = inputs.get(entry)!;
      expect(loaded).toContain(entry);
      for (const { what, test } of FORBIDDEN.filter((rule) => rule.what === "the catalog's price data"))
        expect(loaded.filter(test), what).toEqual([]);
    });
  }

  it("covers the inference, models and passthrough functions", () => {
    expect(DATA_PLANE).toEqual(expect.arrayContaining(["chat", "completions", "embeddings", "models", "passthrough"]));
  });

  for (const name of DATA_PLANE) {
    it(`functions/${name}.ts loads neither classic zod nor control-plane or policy schemas at init`, () => {
      const loaded = inputs.get(`functions/${name}.ts`)!;
      // The walk found the function's own code (a wrong entry chunk would find nothing and pass vacuously).
      expect(loaded).toContain(`functions/${name}.ts`);
      expect(loaded).toContain(`core/routes/handlers/${name}.ts`);
      for (const { what, test, except } of FORBIDDEN)
        if (!except?.includes(name)) expect(loaded.filter(test), what).toEqual([]);
    });
  }

  it("the inference functions validate with zod/mini", () => {
    for (const name of ["chat", "completions", "embeddings"])
      expect(inputs.get(`functions/${name}.ts`)!.some((input) => input.includes("node_modules/zod/v4/mini/"))).toBe(
        true,
      );
  });
});
