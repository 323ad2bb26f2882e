import { existsSync, readdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { QUEUE_NAMES } from "../../core/store/ports.ts";

/**
 * The Lambda entry points: one per route family and one per queue, each bundling only its own code.
 * Checked on the source (what it imports) and on the bundle esbuild makes of it (what it pulls in).
 */

const ROOT = resolve(import.meta.dirname, "../..");
/** Container families (the realtime WebSocket proxy) have no Lambda entry: infra/realtime.ts runs them. */
const LAMBDA_FAMILIES = ROUTE_FAMILIES.filter((family) => (family.platform ?? "lambda") === "lambda");
const HANDLERS_DIR = "core/routes/handlers/";

const importsOf = (source: string) =>
  [
    ...source.matchAll(
      /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/g,
    ),
  ].map((match) => match[1] ?? match[2]);

/** Project files (node_modules left out) that esbuild bundles for an entry point. */
async function bundleInputs(entry: string): Promise<string[]> {
  const result = await build({
    entryPoints: [resolve(ROOT, entry)],
    absWorkingDir: ROOT,
    bundle: true,
    write: false,
    metafile: true,
    platform: "node",
    format: "esm",
    packages: "external",
    logLevel: "silent",
  });
  return Object.keys(result.metafile.inputs);
}

const FAMILY_NAMES = new Set(ROUTE_FAMILIES.map((family) => family.name));

describe("functions/<family>.ts", () => {
  it("exists for every route family, and only for them", () => {
    const files = readdirSync(resolve(ROOT, "functions")).filter((name) => name.endsWith(".ts"));
    expect(files.sort()).toEqual(LAMBDA_FAMILIES.map((family) => `${family.name}.ts`).sort());
  });

  for (const family of LAMBDA_FAMILIES) {
    const file = `functions/${family.name}.ts`;

    it(`${file} imports its own family's handler module and route table entry, and no other`, () => {
      const source = readFileSync(resolve(ROOT, file), "utf8");
      const handlerImports = importsOf(source).filter((specifier) => specifier.includes("routes/handlers"));
      expect(handlerImports).toEqual([`../${HANDLERS_DIR}${family.name}.ts`]);
      const tableImports = importsOf(source).filter((specifier) => specifier.includes("routes/table"));
      expect(tableImports).toEqual([`../core/routes/table/${family.name}.ts`]);
      expect(source).toContain("createLambdaHandler(family, handlers)");
    });

    it(`${file} bundles no other family's handlers and no local-platform code`, async () => {
      const inputs = await bundleInputs(file);
      // A family's handlers may be split over `<family>-<part>.ts` files, as long as no other family has that name.
      const own = (input: string) => {
        const name = input.slice(HANDLERS_DIR.length).replace(/\.ts$/, "");
        return name === family.name || (name.startsWith(`${family.name}-`) && !FAMILY_NAMES.has(name));
      };
      const handlerInputs = inputs.filter((input) => input.startsWith(HANDLERS_DIR));
      expect(handlerInputs).toContain(`${HANDLERS_DIR}${family.name}.ts`);
      expect(handlerInputs.filter((input) => !own(input))).toEqual([]);
      expect(inputs.filter((input) => input.startsWith("core/platform/local/"))).toEqual([]);
    });
  }
});

describe("functions/workers/<queue>.ts", () => {
  for (const queue of QUEUE_NAMES) {
    const file = `functions/workers/${queue}.ts`;

    it(`${file} hands its queue to the SQS adapter`, () => {
      expect(existsSync(resolve(ROOT, file))).toBe(true);
      expect(readFileSync(resolve(ROOT, file), "utf8")).toContain(`createSqsHandler("${queue}")`);
    });

    it(`${file} bundles no route handlers and no local-platform code`, async () => {
      const inputs = await bundleInputs(file);
      expect(
        inputs.filter((input) => input.startsWith(HANDLERS_DIR) || input.startsWith("core/platform/local/")),
      ).toEqual([]);
    });
  }
});

describe("functions/workers/scheduled.ts", () => {
  it("runs the scheduled tasks and bundles no route handlers and no local-platform code", async () => {
    expect(readFileSync(resolve(ROOT, "functions/workers/scheduled.ts"), "utf8")).toContain("createScheduledHandler()");
    const inputs = await bundleInputs("functions/workers/scheduled.ts");
    expect(
      inputs.filter((input) => input.startsWith(HANDLERS_DIR) || input.startsWith("core/platform/local/")),
    ).toEqual([]);
  });
});
