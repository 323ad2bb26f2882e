import { readFileSync, readdirSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROUTE_FAMILIES } from "../../../core/routes/table.ts";

/**
 * The layering rules of docs/control-plane-services.md, checked on the sources: core/control (and, but for a few
 * edge modules, core/auth and core/policies) does not import the HTTP layer; the HTTP layer and the log writer do not import routes/; every handler name in the
 * route table can be found by grepping for it.
 */

const ROOT = resolve(import.meta.dirname, "../../..");
const source = (path: string) => readFileSync(resolve(ROOT, path), "utf8");
const importsOf = (path: string) => [...source(path).matchAll(/^import[^;]*?from "([^"]+)";/gms)].map((m) => m[1]!);

/**
 * Modules of core/auth and core/policies that still take the HTTP layer, each for a reason: they sit at the
 * request edge or on the data plane, not in the control plane. The list only shrinks.
 * - auth/authenticate.ts reads the request's headers (http/request-headers, http/gateway-headers);
 * - auth/api-key-authenticator.ts and auth/jwt.ts answer 401/503 with HTTP errors while authenticating;
 * - policies/enforcer.ts answers 429 with rate-limit headers on the data plane;
 * - policies/key-policies.ts validates `usage_limits` / `rate_limits` with http/json's zod validator.
 */
const EDGE_MODULES = new Set([
  "auth/authenticate.ts",
  "auth/api-key-authenticator.ts",
  "auth/jwt.ts",
  "policies/enforcer.ts",
  "policies/key-policies.ts",
]);

const httpImports = (path: string) => importsOf(path).filter((imported) => imported.includes("/http/"));

describe("layering", () => {
  it("control-plane modules do not import the HTTP layer (they throw domain errors, mapped in toHttpError)", () => {
    const files = readdirSync(resolve(ROOT, "core/control")).filter((name) => name.endsWith(".ts"));
    expect(files).toContain("integrations-service.ts");
    for (const file of files) expect(httpImports(`core/control/${file}`), file).toEqual([]);
  });

  it("core/auth and core/policies do not import the HTTP layer, but for the listed edge modules", () => {
    for (const dir of ["auth", "policies"]) {
      const files = readdirSync(resolve(ROOT, `core/${dir}`)).filter((name) => name.endsWith(".ts"));
      for (const file of files.filter((name) => !EDGE_MODULES.has(`${dir}/${name}`)))
        expect(httpImports(`core/${dir}/${file}`), `${dir}/${file}`).toEqual([]);
    }
    expect(httpImports("core/auth/scopes.ts")).toEqual([]);
    expect(httpImports("core/policies/requests.ts")).toEqual([]);
  });

  it("audit entries are written from plain data: audit.ts takes no RequestContext", () => {
    expect(source("core/control/audit.ts")).not.toMatch(/RequestContext|writeAudit/);
  });

  it("the HTTP layer and the log writer take route types from core/http/route-types.ts, not routes/", () => {
    for (const file of ["core/http/app.ts", "core/logs/log-request.ts"]) {
      expect(
        importsOf(file).filter((path) => path.includes("/routes/")),
        file,
      ).toEqual([]);
    }
  });

  it("every handler name in the route table is written out in it (greppable, never built from a template)", () => {
    const table = readdirSync(resolve(ROOT, "core/routes/table"))
      .map((file) => source(`core/routes/table/${file}`))
      .join("\n");
    const names = new Set(ROUTE_FAMILIES.flatMap((family) => family.routes.map((route) => route.handler)));
    expect(names.size).toBeGreaterThan(50);
    for (const name of names) expect(table, name).toContain(`"${name}"`);
    expect(table).not.toMatch(/handler:\s*`/);
  });
});
