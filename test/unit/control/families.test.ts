import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_HANDLERS } from "../../../core/routes/handlers.ts";
import { ROUTE_FAMILIES } from "../../../core/routes/table.ts";
import { ROOT, sourceFiles } from "../../helpers/source-imports.ts";

/**
 * One family, three files of one name: functions/<family>.ts (its Lambda), core/routes/table/<family>.ts (its
 * routes, pure data) and core/routes/handlers/<family>.ts (its handlers, their one home). Checked for every
 * family of the route table, and that nothing else builds a handler map (no re-export shims).
 */

const names = (dir: string) =>
  readdirSync(join(ROOT, dir))
    .filter((name) => name.endsWith(".ts"))
    .map((name) => name.slice(0, -".ts".length))
    .sort();

const FAMILIES = ROUTE_FAMILIES.map((family) => family.name).sort();

describe("route families line up by name", () => {
  it("routes/table/ and routes/handlers/ hold one file per family, and nothing else", () => {
    expect(names("core/routes/table")).toEqual(FAMILIES);
    expect(names("core/routes/handlers")).toEqual(FAMILIES);
    expect(Object.keys(ALL_HANDLERS).sort()).toEqual(FAMILIES);
  });

  it("functions/ holds one file per family that runs as a Lambda function", () => {
    const lambdas = ROUTE_FAMILIES.filter((family) => (family.platform ?? "lambda") === "lambda").map((f) => f.name);
    expect(names("functions")).toEqual(lambdas.sort());
  });

  for (const family of ROUTE_FAMILIES) {
    it(`${family.name}: its table file is its family, its handler file serves every route of it`, async () => {
      const table = await import(`../../../core/routes/table/${family.name}.ts`);
      expect(table.family).toBe(family);
      const { handlers } = await import(`../../../core/routes/handlers/${family.name}.ts`);
      expect(handlers).toBe(ALL_HANDLERS[family.name]);
      const routed = new Set(family.routes.map((route) => route.handler));
      expect(Object.keys(handlers).sort()).toEqual([...routed].sort());
      if (existsSync(join(ROOT, `functions/${family.name}.ts`))) {
        const entry = readFileSync(join(ROOT, `functions/${family.name}.ts`), "utf8");
        expect(entry).toContain(`"../core/routes/handlers/${family.name}.ts"`);
      }
    });
  }

  it("only routes/handlers/ builds handler maps: no module elsewhere hands a family its handlers", () => {
    const builders = sourceFiles("core")
      .filter((file) => !file.startsWith("core/routes/handlers/"))
      .filter((file) => /:\s*HandlerMap\s*=/.test(readFileSync(join(ROOT, file), "utf8")));
    expect(builders).toEqual([]);
  });
});
