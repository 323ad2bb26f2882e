import { describe, expect, it } from "vitest";
import { createApp } from "../../../../core/http/app.ts";
import { RouteNotMatched } from "../../../../core/http/errors.ts";
import { json } from "../../../../core/http/json.ts";
import { ROUTE_FAMILIES, type RouteFamily } from "../../../../core/routes/table.ts";
import type { Services } from "../../../../core/services.ts";
import { routerPrefixes, matchPrefix } from "../../../../infra/router-prefixes.ts";

/** Catch-all routes (the pass-through family) only get what no dedicated route matches, whatever the order. */

const families: RouteFamily[] = [
  {
    name: "catch",
    dataPlane: true,
    timeoutSeconds: 10,
    routes: [
      { method: "POST", path: "/v1/*", handler: "rest", auth: "none", catchAll: true },
      { method: "GET", path: "/v1/*", handler: "rest", auth: "none", catchAll: true },
    ],
  },
  {
    name: "specific",
    dataPlane: true,
    timeoutSeconds: 10,
    routes: [
      { method: "POST", path: "/v1/chat/completions", handler: "chat", auth: "none" },
      { method: "GET", path: "/v1/files/:id", handler: "file", auth: "none" },
      { method: "PUT", path: "/v1/things", handler: "chat", auth: "none" },
    ],
  },
];

const app = createApp({
  families,
  handlers: {
    catch: {
      async rest(request) {
        if (request.headers.get("x-gateway-provider") === null) throw new RouteNotMatched();
        return json({ route: "catch-all" });
      },
    },
    specific: {
      chat: async (_request, ctx) => json({ route: "chat", path: ctx.path }),
      file: async (_request, ctx) => json({ route: `file ${ctx.params.id}` }),
    },
  },
  services: {} as Services,
});
// The local server and Lambda give the path (routes without parameters are then found by one map lookup);
// other callers leave it to the router. Both must route alike.
describe.each([
  ["the router", false],
  ["the platform's path", true],
])("catch-all routes, found through %s", (_name, givesPath) => {
  const call = (method: string, path: string, headers: Record<string, string> = {}) =>
    app(new Request(`http://gateway.test${path}`, { method, headers }), {
      waitUntil: () => {},
      ...(givesPath ? { path: path.split("?")[0] } : {}),
    });

  it("never shadow dedicated routes, even when their family comes first", async () => {
    expect(await (await call("POST", "/v1/chat/completions?x=1", { "x-gateway-provider": "openai" })).json()).toEqual({
      route: "chat",
      path: "/v1/chat/completions",
    });
    // Not the exact path: the router decides (here the catch-all).
    expect(await (await call("POST", "/v1/chat/completions/", { "x-gateway-provider": "openai" })).json()).toEqual({
      route: "catch-all",
    });
    expect(await (await call("GET", "/v1/files/f1", { "x-gateway-provider": "openai" })).json()).toEqual({
      route: "file f1",
    });
    expect(await (await call("POST", "/v1/assistants", { "x-gateway-provider": "openai" })).json()).toEqual({
      route: "catch-all",
    });
  });

  it("answer like no route matched when their handler declines", async () => {
    const missing = await call("GET", "/v1/unknown");
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe("unknown_url");
    const wrong = await call("POST", "/v1/things");
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("PUT");
  });
});

describe("catch-all routes on AWS", () => {
  it("the AWS router sends every dedicated prefix to its own family and the rest of /v1 to pass-through", () => {
    const prefixes = routerPrefixes(ROUTE_FAMILIES);
    expect(matchPrefix(prefixes, "/v1/chat/completions")?.family).toBe("chat");
    expect(matchPrefix(prefixes, "/v1/assistants/asst_1")?.family).toBe("assistants");
    expect(matchPrefix(prefixes, "/v1/containers/cntr_1")?.family).toBe("passthrough");
    expect(matchPrefix(prefixes, "/v1/proxy/chat/completions")?.family).toBe("passthrough");
  });
});

describe("routes found by the platform's path", () => {
  const answerBoth = async (app: ReturnType<typeof createApp>, method: string, path: string) => {
    const viaRouter = await app(new Request(`http://gateway.test${path}`, { method }), { waitUntil: () => {} });
    const viaPath = await app(new Request(`http://gateway.test${path}`, { method }), { waitUntil: () => {}, path });
    return [`${viaRouter.status} ${await viaRouter.text()}`, `${viaPath.status} ${await viaPath.text()}`];
  };

  it("answer like the router for every route of the real table", async () => {
    const handlers = Object.fromEntries(
      ROUTE_FAMILIES.map((family) => [
        family.name,
        new Proxy({}, { get: (_target, name) => async () => new Response(`${family.name}.${String(name)}`) }),
      ]),
    );
    const families = ROUTE_FAMILIES.map((family) => ({
      ...family,
      routes: family.routes.map((route) => ({ ...route, auth: "none" as const })),
    }));
    const app = createApp({ families, handlers, services: {} as Services });
    const differences: string[] = [];
    for (const route of ROUTE_FAMILIES.flatMap((family) => family.routes)) {
      if (/[:*]/.test(route.path)) continue;
      for (const method of new Set([route.method, "HEAD", "GET", "POST"])) {
        const [viaRouter, viaPath] = await answerBoth(app, method, route.path);
        if (viaRouter !== viaPath) differences.push(`${method} ${route.path}: ${viaRouter} / ${viaPath}`);
      }
    }
    expect(differences).toEqual([]);
  });

  it("leave a path to the router when a route registered before matches it too (Hono runs the first)", async () => {
    const app = createApp({
      families: [
        {
          name: "ordered",
          dataPlane: true,
          timeoutSeconds: 10,
          routes: [
            { method: "GET", path: "/v1/things/:id", handler: "one", auth: "none" },
            { method: "GET", path: "/v1/things/static", handler: "fixed", auth: "none" },
          ],
        },
      ],
      handlers: {
        ordered: {
          one: async (_request, ctx) => new Response(`param ${ctx.params.id}`),
          fixed: async () => new Response("fixed"),
        },
      },
      services: {} as Services,
    });
    expect(await answerBoth(app, "GET", "/v1/things/static")).toEqual(["200 param static", "200 param static"]);
  });
});
