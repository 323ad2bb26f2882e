import { describe, expect, it } from "vitest";
import { ROUTE_FAMILIES, type RouteFamily, type RouteSpec } from "../../core/routes/table.ts";
import { matchPrefix, routePrefix, routerPrefixes } from "../../infra/router-prefixes.ts";

const family = (name: string, ...paths: string[]): RouteFamily => ({
  name,
  dataPlane: false,
  timeoutSeconds: 10,
  routes: paths.map((path): RouteSpec => ({ method: "GET", path, handler: "h", auth: "none" })),
});

describe("routePrefix", () => {
  it("cuts a path before its first parameter or wildcard segment", () => {
    expect(routePrefix("/v1/models")).toBe("/v1/models");
    expect(routePrefix("/v1/files/:id/content")).toBe("/v1/files");
    expect(routePrefix("/v1/batches/:id{[a-z_0-9]+}/cancel")).toBe("/v1/batches");
    expect(routePrefix("/v1/mcp/*")).toBe("/v1/mcp");
    expect(routePrefix("/:anything")).toBe("/");
  });
});

describe("matchPrefix", () => {
  const prefixes = [
    { prefix: "/v1", family: "a" },
    { prefix: "/v1/models", family: "b" },
  ];

  it("picks the longest prefix at a segment boundary", () => {
    expect(matchPrefix(prefixes, "/v1/models")?.family).toBe("b");
    expect(matchPrefix(prefixes, "/v1/models/gpt-4o")?.family).toBe("b");
    expect(matchPrefix(prefixes, "/v1/models-x")?.family).toBe("a");
    expect(matchPrefix(prefixes, "/v2")).toBeUndefined();
  });
});

describe("routerPrefixes", () => {
  it("keeps one prefix per family where a shorter one already routes the longer paths", () => {
    const prefixes = routerPrefixes([
      family("files", "/v1/files", "/v1/files/:id", "/v1/files/:id/content"),
      family("models", "/v1/models", "/v1/models/:id"),
    ]);
    expect(prefixes).toEqual([
      { prefix: "/v1/files", family: "files" },
      { prefix: "/v1/models", family: "models" },
    ]);
  });

  it("keeps a longer prefix that must beat another family's shorter one", () => {
    const prefixes = routerPrefixes([
      family("admin", "/v1/admin", "/v1/admin/keys/rotate"),
      family("keys", "/v1/admin/keys"),
    ]);
    expect(prefixes).toEqual([
      { prefix: "/v1/admin", family: "admin" },
      { prefix: "/v1/admin/keys", family: "keys" },
      { prefix: "/v1/admin/keys/rotate", family: "admin" },
    ]);
  });

  it("refuses two families that need the same prefix", () => {
    expect(() => routerPrefixes([family("a", "/v1/prompts/:id"), family("b", "/v1/prompts/:id/render")])).toThrow(
      /'a' and 'b' both need the router prefix \/v1\/prompts/,
    );
  });

  it("refuses a prefix that would capture another family's parameterised paths", () => {
    expect(() => routerPrefixes([family("a", "/v1/files/:id/content"), family("b", "/v1/files/batch")])).toThrow(
      /\/v1\/files\/batch of family 'b' would capture requests for GET \/v1\/files\/:id\/content/,
    );
  });
});

describe("the route table's prefixes", () => {
  it("send the Uploads API to the files function, not the pass-through catch-all", () => {
    const prefixes = routerPrefixes(ROUTE_FAMILIES);
    for (const path of ["/v1/uploads", "/v1/uploads/upload_x/parts", "/v1/uploads/upload_x/complete"]) {
      expect(matchPrefix(prefixes, path)?.family).toBe("files");
    }
  });
});
