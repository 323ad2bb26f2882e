import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, importCircles, importGraph } from "../../helpers/source-imports.ts";

/**
 * The planes of core/ (docs/architecture.md) and the rules that keep their layering true, checked on the
 * sources: what providers, services and the inference and observe planes may import, no import circles, and
 * the size of the map (top-level entries, files).
 */

const graph = importGraph("core");

/** The imports of files under `dir` that land under one of `forbidden`, as `from -> to` lines. */
function importsInto(dir: string, forbidden: string[], except: ReadonlySet<string> = new Set()): string[] {
  return [...graph]
    .filter(([file]) => file.startsWith(dir) && !except.has(file))
    .flatMap(([file, imports]) =>
      imports.filter(({ to }) => forbidden.some((place) => to.startsWith(place))).map(({ to }) => `${file} -> ${to}`),
    );
}

/** The HTTP layer: Request -> Response plumbing and the routes. */
const HTTP_LAYER = ["core/http/", "core/routes/"];

/**
 * Modules of the service folders that answer HTTP themselves, each for a reason (the list only shrinks):
 * - the MCP endpoint and its server-side tool loop are the MCP data plane (they answer JSON-RPC and SSE);
 * - oauth/bearer.ts answers the MCP endpoint's 401 challenge, oauth/oauth-errors.ts OAuth's error shape;
 * - the gateway tool host answers the tool calls of chat and responses as HTTP errors;
 * - agents/invocation.ts is the A2A endpoint and forwarding-handler.ts its handler (an upstream answer too large is
 *   its 502); card-fetch.ts and card-rules.ts refuse a card with a 4xx.
 */
const SERVICE_EDGE_MODULES = new Set([
  ...readdirSync(join(ROOT, "core/features/mcp/endpoint")).map((name) => `core/features/mcp/endpoint/${name}`),
  ...readdirSync(join(ROOT, "core/features/mcp/server-side")).map((name) => `core/features/mcp/server-side/${name}`),
  "core/features/mcp/oauth/bearer.ts",
  "core/features/mcp/oauth/oauth-errors.ts",
  "core/features/mcp/gateway-tool-host.ts",
  // The upstream clients the tool host and the endpoint keep: an oversized upstream answer becomes its 502 there.
  "core/features/mcp/upstream/kept-clients.ts",
  "core/features/agents/invocation.ts",
  "core/features/agents/card-fetch.ts",
  "core/features/agents/card-rules.ts",
  // The A2A SDK's request handler the proxy forwards through: it keeps the 502 an oversized answer became.
  "core/features/agents/forwarding-handler.ts",
]);

/**
 * Which gateway logs analytics counts is the route table's data-plane flag (observe/analytics/counted-routes.ts):
 * the one place under observe/ that reads the table, kept because countLogs's reference test holds it to the
 * table as it is. The list only shrinks.
 */
const ROUTE_TABLE_READERS = new Set(["core/observe/analytics/counted-routes.ts"]);

describe("planes", () => {
  it("core/ has at most 16 top-level entries", () => {
    const entries = readdirSync(join(ROOT, "core"));
    expect(entries.length, entries.join(", ")).toBeLessThanOrEqual(16);
  });

  it("no source file of core/ is over 600 lines", () => {
    const long = [...graph.keys()]
      .map((file) => ({ file, lines: readFileSync(join(ROOT, file), "utf8").split("\n").length }))
      .filter(({ lines }) => lines > 600);
    expect(long).toEqual([]);
  });

  it("providers are pure transforms: they import only providers/, security/ and util/", () => {
    const outside = [...graph]
      .filter(([file]) => file.startsWith("core/providers/"))
      .flatMap(([file, imports]) =>
        imports
          .filter(
            ({ to }) => !["core/providers/", "core/security/", "core/util/"].some((place) => to.startsWith(place)),
          )
          .map(({ to }) => `${file} -> ${to}`),
      );
    expect(outside).toEqual([]);
  });

  it("no service imports the HTTP layer: control/, identity/, the MCP and agents services (but the listed edges)", () => {
    for (const dir of ["core/control/", "core/identity/", "core/features/mcp/", "core/features/agents/"])
      expect(importsInto(dir, HTTP_LAYER, SERVICE_EDGE_MODULES), dir).toEqual([]);
  });

  it("the inference and observe planes do not import routes/ (paths are passed in)", () => {
    expect(importsInto("core/inference/", ["core/routes/"])).toEqual([]);
    expect(importsInto("core/observe/", ["core/routes/"], ROUTE_TABLE_READERS)).toEqual([]);
  });

  it("the lower planes import nothing of the planes above them", () => {
    const above = ["core/routes/", "core/platform/", "core/features/", "core/identity/"];
    for (const dir of ["core/inference/", "core/observe/", "core/control/", "core/auth/", "core/http/"])
      expect(
        importsInto(dir, above).filter((line) => !OTHER_PLANE_EDGES.has(line)),
        dir,
      ).toEqual([]);
    expect(importsInto("core/store/", ["core/"]).filter((line) => !line.includes("-> core/store/"))).toEqual([
      "core/store/ports.ts -> core/observe/logs/log-record.ts",
      "core/store/ports.ts -> core/observe/logs/log-search.ts",
    ]);
  });

  it("there are no import circles in core/, runtime or type-only", () => {
    expect(importCircles(graph)).toEqual([]);
  });
});

/**
 * Imports from a lower plane into features/, identity/ or routes/ that the code has today, each for a reason (the list
 * only shrinks):
 * - multipart inference bodies and OCR of an uploaded file read the files feature's parser and store;
 * - the analytics groups name saved prompts by the metadata key the prompt runtime writes;
 * - API-key authentication accepts an SSO session cookie (auth/authenticate.ts);
 * - analytics reads which routes it counts from the table (ROUTE_TABLE_READERS above).
 */
const OTHER_PLANE_EDGES = new Set([
  "core/observe/analytics/counted-routes.ts -> core/routes/table.ts",
  "core/inference/gateway/multipart-body.ts -> core/features/files/multipart.ts",
  "core/inference/gateway/ocr-file.ts -> core/features/files/file-store.ts",
  "core/observe/analytics/graphs.ts -> core/features/prompts/metadata.ts",
  "core/auth/authenticate.ts -> core/identity/sso/sessions.ts",
]);
