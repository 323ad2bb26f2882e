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
 * The OAuth endpoints answer in OAuth's error shape (`error` a code, `error_description`; core/features/mcp/oauth) with the
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

describe("bad input on an MCP server's endpoint", () => {
  // The route table's pass above reaches /mcp/:server for a server that does not exist (404 before the body is
  // read); this one sends bad JSON-RPC to a real one.
  it("answers JSON-RPC errors with 4xx statuses, never a 5xx", async () => {
    const { startMcpUpstream } = await import("../helpers/mcp-upstream.ts");
    const { seedMcpServer } = await import("../helpers/mcp-records.ts");
    const upstream = await startMcpUpstream();
    try {
      const { server } = await seedMcpServer(gateway, {
        url: upstream.url,
        workspaceId: gateway.gateway.bootstrap.defaultWorkspaceId,
      });
      const send = async (body: string, headers: Record<string, string> = {}) => {
        const response = await fetch(`${gateway.url}/mcp/${server.slug}`, {
          method: "POST",
          headers: {
            "x-gateway-api-key": gateway.adminKey,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            ...headers,
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        return { status: response.status, text: await response.text() };
      };
      for (const body of [
        "{not json",
        "[]",
        "42",
        '{"jsonrpc":"1.0","id":1,"method":"tools/list"}',
        '{"jsonrpc":"2.0","id":1}',
        '{"jsonrpc":"2.0","id":{"a":1},"method":"tools/call"}',
        `[${Array.from({ length: 2000 }, (_, id) => `{"jsonrpc":"2.0","id":${id},"method":"ping"}`).join(",")}]`,
      ]) {
        const answer = await send(body);
        expect(answer.status, `${body.slice(0, 60)} -> ${answer.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, body.slice(0, 60)).toBeLessThan(500);
        expect(JSON.parse(answer.text).error, body.slice(0, 60)).toMatchObject({ message: expect.any(String) });
      }
      // Well-formed but wrong: JSON-RPC errors in a 200 answer (the transport's own status rules).
      const call = await send(
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":42}}}',
        { "mcp-protocol-version": "2025-06-18" },
      );
      expect(call.status).toBeLessThan(500);
      expect(call.text).toMatch(/error|isError/);
      expect((await send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { accept: "text/plain" })).status).toBe(406);
      expect(
        (await send('{"jsonrpc":"2.0","id":1,"method":"tools/list"}', { "content-type": "text/plain" })).status,
      ).toBe(415);
    } finally {
      await upstream.close();
    }
  });
});
