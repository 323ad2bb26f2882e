import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROUTE_FAMILIES, type RouteSpec } from "../../core/routes/table.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * Every route of the table, called with an admin key and bad input (malformed JSON, an empty object, a
 * wrong-typed body, unknown ids), answers a clear 4xx in the OpenAI error shape: never a 5xx or a hang.
 */

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ ENABLE_PROMETHEUS: "true" });
});

afterAll(async () => {
  await gateway?.close();
});

const routes: RouteSpec[] = ROUTE_FAMILIES.flatMap((family) => family.routes).filter(
  (route) => !route.path.includes("*") && route.path !== "/_blobs/*",
);

function pathOf(route: RouteSpec): string {
  return route.path.replace(/:\w+/g, "does-not-exist");
}

/**
 * The OAuth endpoints answer in OAuth's error shape (`error` a code, `error_description`; core/mcp/oauth) with the
 * gateway's `message` and `type` beside it; the authorize pages answer HTML pages. Both are read as one shape here.
 */
const OAUTH_PAGES = new Set(["/oauth/authorize/sign-in", "/oauth/authorize/consent"]);

function asGatewayError(route: RouteSpec, json: any, text: string): any {
  if (OAUTH_PAGES.has(route.path)) return { error: { message: text, type: "page" } };
  if (route.path.startsWith("/oauth/") && typeof json?.error === "string") {
    expect(json.error_description).toEqual(expect.any(String));
    return { error: { message: json.message, type: json.type } };
  }
  return json;
}

async function call(route: RouteSpec, body: string | undefined): Promise<{ status: number; json: any }> {
  const response = await fetch(`${gateway.url}${pathOf(route)}`, {
    method: route.method,
    headers: {
      "x-gateway-api-key": gateway.adminKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json: asGatewayError(route, json, text) };
}

describe("bad input on every route", () => {
  const withBody = routes.filter((route) => route.method !== "GET" && route.method !== "DELETE");

  it.each(withBody.map((route) => [`${route.method} ${route.path}`, route] as const))(
    "%s: malformed JSON and wrong-typed bodies answer 4xx, {} never 5xx",
    async (_name, route) => {
      // An empty object may be a valid no-op update; it must still never fail with a 5xx.
      const empty = await call(route, "{}");
      expect(empty.status, `${route.method} ${route.path} with {}`).toBeLessThan(500);
      if (empty.status >= 400) expect(empty.json?.error?.message).toEqual(expect.any(String));
      for (const body of ["{not json", '{"name": 42, "model": [], "messages": "x", "value": "high"}', "[]"]) {
        const { status, json } = await call(route, body);
        expect(status, `${route.method} ${route.path} with ${body}`).toBeGreaterThanOrEqual(400);
        expect(status, `${route.method} ${route.path} with ${body}`).toBeLessThan(500);
        expect(json?.error, `${route.method} ${route.path} with ${body}`).toMatchObject({
          message: expect.any(String),
          type: expect.any(String),
        });
      }
    },
  );

  // Parameters that name no stored resource: any value is a valid (empty) query.
  const freeParameters = new Set(["/v1/analytics/groups/metadata/:key"]);
  const reads = routes.filter(
    (route) =>
      (route.method === "GET" || route.method === "DELETE") &&
      route.path.includes(":") &&
      !freeParameters.has(route.path),
  );
  it.each(reads.map((route) => [`${route.method} ${route.path}`, route] as const))(
    "%s: unknown ids answer 4xx",
    async (_name, route) => {
      const { status, json } = await call(route, undefined);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(500);
      expect(json?.error?.message).toEqual(expect.any(String));
    },
  );
});
