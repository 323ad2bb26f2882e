import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";

/**
 * MCP clients that run in a web page call the OAuth discovery, registration and token endpoints and the MCP
 * endpoint cross-origin: the browser first sends a CORS preflight. Those routes answer it and make their answers
 * readable (the 401's WWW-Authenticate included); the rest of the API does not.
 */

const PAGE = "https://mcp-client.example";
let gateway: TestGateway;
let upstream: McpUpstream;
let serverSlug: string;
let key: string;

beforeAll(async () => {
  upstream = await startMcpUpstream();
  gateway = await startTestGateway({ MCP_ALLOWED_ORIGINS: PAGE });
  const workspace = await seedWorkspace(gateway, "CORS");
  key = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "cors",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
  serverSlug = (await seedMcpServer(gateway, { url: upstream.url, workspaceId: workspace.id })).server.slug;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

const preflight = (path: string, method: string, headers = "authorization, content-type, mcp-protocol-version") =>
  fetch(`${gateway.url}${path}`, {
    method: "OPTIONS",
    headers: { origin: PAGE, "access-control-request-method": method, "access-control-request-headers": headers },
  });

describe("CORS", () => {
  it("answers the preflight of the OAuth and MCP routes", async () => {
    for (const [path, method] of [
      ["/.well-known/oauth-authorization-server", "GET"],
      [`/.well-known/oauth-protected-resource/mcp/${serverSlug}`, "GET"],
      ["/oauth/register", "POST"],
      ["/oauth/token", "POST"],
      [`/mcp/${serverSlug}`, "POST"],
    ] as const) {
      const answer = await preflight(path, method);
      expect(answer.status, path).toBe(204);
      expect(answer.headers.get("access-control-allow-origin"), path).toBe("*");
      expect(answer.headers.get("access-control-allow-methods"), path).toContain(method);
      for (const header of ["authorization", "content-type", "mcp-protocol-version"]) {
        expect(answer.headers.get("access-control-allow-headers"), path).toContain(header);
      }
    }
  });

  it("makes the MCP endpoint's answers readable, its 401 challenge included", async () => {
    const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" });
    const headers = { origin: PAGE, "content-type": "application/json", accept: "application/json, text/event-stream" };
    const refused = await fetch(`${gateway.url}/mcp/${serverSlug}`, { method: "POST", headers, body });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe("*");
    expect(refused.headers.get("access-control-expose-headers")).toContain("www-authenticate");
    const answered = await fetch(`${gateway.url}/mcp/${serverSlug}`, {
      method: "POST",
      headers: { ...headers, authorization: `Bearer ${key}` },
      body,
    });
    expect(answered.status).toBe(200);
    expect(answered.headers.get("access-control-allow-origin")).toBe("*");
  });

  it("leaves the rest of the API without CORS (a preflight there is refused)", async () => {
    const answer = await preflight("/v1/chat/completions", "POST");
    expect(answer.status).toBe(405);
    expect(answer.headers.get("access-control-allow-origin")).toBeNull();
    const listed = await fetch(`${gateway.url}/v1/logs`, { headers: { origin: PAGE, "x-gateway-api-key": key } });
    expect(listed.headers.get("access-control-allow-origin")).toBeNull();
  });
});
