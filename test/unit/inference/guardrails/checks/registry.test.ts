import { resolve } from "node:path";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { initChunks } from "../../../../../bench/lib/init-chunks.ts";
import { assertNoLazyCommonJs } from "../../../../../scripts/build.ts";
import {
  allChecks,
  canonicalCheckId,
  checkIds,
  checkSpecProblem,
  findCheck,
} from "../../../../../core/inference/guardrails/checks/registry.ts";

const ROOT = resolve(import.meta.dirname, "../../../../..");

describe("the check registry", () => {
  it("answers to each check's own id and aliases, and the loaded check agrees", async () => {
    const checks = await allChecks();
    expect(checks.map((check) => check.id).sort()).toEqual(
      [
        "default.blockedModels",
        "default.characterCount",
        "default.contains",
        "default.containsCode",
        "default.jsonKeys",
        "default.jsonSchema",
        "default.jwt",
        "default.language",
        "default.modelGraded",
        "default.modelWhitelist",
        "default.moderation",
        "default.pii",
        "default.regexMatch",
        "default.requiredMetadataKeys",
        "default.sentenceCount",
        "default.validUrls",
        "default.webhook",
        "default.wordCount",
      ].sort(),
    );
    for (const check of checks) {
      expect(canonicalCheckId(check.id)).toBe(check.id);
      for (const alias of check.aliases ?? []) {
        expect(canonicalCheckId(alias)).toBe(check.id);
        expect(await findCheck(alias)).toBe(check);
      }
    }
    // The registry's table and the checks' own aliases name the same ids.
    expect(checkIds().sort()).toEqual(checks.flatMap((check) => [check.id, ...(check.aliases ?? [])]).sort());
    expect(canonicalCheckId("portkey.language")).toBe("default.language");
    expect(canonicalCheckId("default.allowedModels")).toBe("default.modelWhitelist");
  });

  it("refuses an unknown id, bad parameters and a check in a phase it does not run in", async () => {
    expect(await checkSpecProblem({ id: "default.nope", parameters: {} })).toEqual({
      path: "id",
      message: "unknown check 'default.nope'",
    });
    expect(await checkSpecProblem({ id: "default.contains", parameters: { words: [] } })).toMatchObject({
      path: "parameters.words",
    });
    expect(
      await checkSpecProblem({ id: "default.contains", parameters: { words: ["a"], operator: "some" } }),
    ).toMatchObject({
      path: "parameters.operator",
    });
    expect(
      await checkSpecProblem({ id: "default.modelWhitelist", parameters: { models: ["gpt-4o"] } }, "output"),
    ).toEqual({ path: "id", message: "default.modelWhitelist runs only on input, not on output" });
    expect(
      await checkSpecProblem({ id: "default.modelWhitelist", parameters: { models: ["gpt-4o"] } }, "input"),
    ).toBeUndefined();
  });

  it("fills in defaults on success", async () => {
    const spec = { id: "default.contains", parameters: { words: ["refund"] } as Record<string, unknown> };
    expect(await checkSpecProblem(spec)).toBeUndefined();
    expect(spec.parameters).toEqual({ words: ["refund"], operator: "any", wholeWords: true, caseSensitive: false });
  });

  it("imports no check (nor zod, nor a check's library) at load: checks are imported on first use", async () => {
    // Bundled as the gateway is (split chunks): CommonJS libraries (ajv) must be imported statically by the
    // lazily imported check, never with import() (scripts/build.ts).
    const { metafile } = await build({
      absWorkingDir: ROOT,
      entryPoints: ["core/inference/guardrails/checks/registry.ts"],
      bundle: true,
      write: false,
      metafile: true,
      splitting: true,
      outdir: "out",
      format: "esm",
      platform: "node",
      mainFields: ["module", "main"],
      logLevel: "silent",
    });
    const entry = Object.keys(metafile.outputs).find(
      (output) => metafile.outputs[output]!.entryPoint === "core/inference/guardrails/checks/registry.ts",
    )!;
    const loaded = initChunks(metafile.outputs, entry).flatMap((output) =>
      Object.keys(metafile.outputs[output]!.inputs),
    );
    expect(loaded).toEqual(["core/inference/guardrails/checks/registry.ts"]);
    expect(() => assertNoLazyCommonJs(metafile)).not.toThrow();
    // ...and every check is there as a chunk of its own, for the first guardrail that uses it.
    const all = Object.values(metafile.outputs).flatMap((output) => Object.keys(output.inputs));
    expect(all).toEqual(
      expect.arrayContaining([
        "core/inference/guardrails/checks/jwt.ts",
        "core/inference/guardrails/checks/language.ts",
      ]),
    );
  });
});
