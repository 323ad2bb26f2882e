import { describe, expect, it } from "vitest";
import { ROUTE_FAMILIES } from "../../../core/routes/table.ts";
import type { SuiteContext } from "./context.ts";

/** The end-to-end suite (index.ts): the control plane and every route family. */
export function describeControl(suite: SuiteContext): void {
  const { api } = suite;
  describe("the control plane and every route family", () => {
    it("control-plane families answer: logs, configs, integrations, api-keys, workspaces and the rest", async () => {
      await expect.poll(async () => (await api("GET", "/v1/logs?limit=5")).body.data?.length ?? 0).toBeGreaterThan(0);
      expect((await api("GET", "/v1/configs")).status).toBe(200);
      expect((await api("GET", "/v1/integrations")).status).toBe(200);
      expect((await api("GET", "/v1/api-keys")).status).toBe(200);
      const workspaces = await api("GET", "/v1/admin/workspaces");
      expect(workspaces.status).toBe(200);
      expect(workspaces.body.data.length).toBeGreaterThan(0);
      // Without a key, a control-plane route refuses (authentication runs too).
      expect((await api("GET", "/v1/configs", undefined, "gk-not-a-key")).status).toBe(401);
    });

    it("each family of the route table is mounted and answers without a server error", async () => {
      const failures: string[] = [];
      for (const family of ROUTE_FAMILIES) {
        // Its first GET route without parameters (a list), else its first route.
        const route =
          family.routes.find((candidate) => candidate.method === "GET" && !/[:*]/.test(candidate.path)) ??
          family.routes[0]!;
        const path = route.path.replace(/:\w+/g, "x").replace("*", "x");
        const { status, body } = await api(route.method, path, route.method === "GET" ? undefined : {});
        const text = JSON.stringify(body);
        // /v1/auth/self takes a JWT, never a key: a 403 that says so is its answer to the admin key. /v1/realtime
        // is a WebSocket endpoint: a plain GET is told to upgrade (426; the session is tested above).
        const plain =
          route.method === "GET" &&
          !/[:*]/.test(route.path) &&
          route.path !== "/v1/auth/self" &&
          route.path !== "/v1/realtime";
        // The Assistants API forwards to a provider: without one, 400 missing_provider is its handler's answer.
        const needsProvider = family.name === "assistants" && status === 400 && text.includes("missing_provider");
        if (status >= 500 || text.includes("unknown_url") || (plain && status !== 200 && !needsProvider)) {
          failures.push(`${family.name}: ${route.method} ${path} -> ${status} ${text.slice(0, 200)}`);
        }
      }
      expect(failures).toEqual([]);
      expect(suite.gateway.output()).not.toMatch(/unhandled error/);
    });

    it("the web console's static files: its page, and a content-hashed asset it loads", async () => {
      const page = await fetch(`${suite.gateway.url}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toMatch(/^text\/html/);
      const html = await page.text();
      const asset = /(?:src|href)="(?:\.?\/)?(assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(asset, html.slice(0, 500)).toBeTruthy();
      const script = await fetch(`${suite.gateway.url}/${asset}`);
      expect(script.status).toBe(200);
      expect(script.headers.get("content-type")).toMatch(/javascript/);
      expect(script.headers.get("cache-control")).toMatch(/immutable/);
      expect((await script.text()).length).toBeGreaterThan(1000);
    });
  });
}
