import { describe, expect, it } from "vitest";
import { openValue } from "../../../../core/control/sealed-values.ts";
import {
  checkConfigurations,
  mergeConfigurations,
  presentConfigurations,
} from "../../../../core/features/mcp/integrations/configurations.ts";
import { snapshotFromBody } from "../../../../core/features/mcp/integrations/sync.ts";
import type { McpIntegration } from "../../../../core/features/mcp/records.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

// A Secrets port that "seals" reversibly, enough to see what was stored.
const secrets = {
  encrypt: async (plain: string) => `sealed:${Buffer.from(plain).toString("base64")}`,
  decrypt: async (sealed: string) => Buffer.from(sealed.slice(7), "base64").toString("utf8"),
};
const deps = { secrets, trustedHosts: parseTrustedHosts(["127.0.0.1"]) } as never;

describe("MCP integration configurations", () => {
  it("seals header values and the client secret, and shows only hints", async () => {
    const stored = await mergeConfigurations(deps, {
      headers: { "X-Api-Key": "header-secret-0123456789" },
      client_id: "client",
      client_secret: "client-secret-0123456789",
    });
    expect(JSON.stringify(stored)).not.toContain("header-secret-0123456789");
    expect(JSON.stringify(stored)).not.toContain("client-secret-0123456789");
    expect(await openValue(secrets, stored.headers!["X-Api-Key"]!)).toBe("header-secret-0123456789");
    const view = presentConfigurations(stored);
    expect(view).toEqual({
      headers: { "X-Api-Key": "he********6789" },
      client_id: "client",
      client_secret: "cl********6789",
    });
  });

  it("keeps a stored secret when its hint comes back, replaces it when a value comes, and refuses a bare mask", async () => {
    const stored = await mergeConfigurations(deps, {
      headers: { "X-Api-Key": "header-secret-0123456789", B: "b-value-0123456789" },
    });
    const kept = await mergeConfigurations(deps, { headers: { "x-api-key": "he********6789" } }, stored);
    expect(kept.headers!["x-api-key"]).toEqual(stored.headers!["X-Api-Key"]);
    // The header set is replaced as a whole: B is gone.
    expect(Object.keys(kept.headers!)).toEqual(["x-api-key"]);
    const replaced = await mergeConfigurations(deps, { headers: { "X-Api-Key": "new-secret-0123456789" } }, stored);
    expect(await openValue(secrets, replaced.headers!["X-Api-Key"]!)).toBe("new-secret-0123456789");
    await expect(mergeConfigurations(deps, { headers: { Other: "********" } }, stored)).rejects.toMatchObject({
      param: "configurations.headers.Other",
    });
    await expect(mergeConfigurations(deps, { client_secret: "********" }, stored)).rejects.toMatchObject({
      param: "configurations.client_secret",
    });
  });

  it("merges fields one by one, null removing one; SSRF-checks token_url", async () => {
    const stored = await mergeConfigurations(deps, { client_id: "a", scope: "read", client_secret: "s".repeat(20) });
    const next = await mergeConfigurations(deps, { scope: null, client_id: "b" }, stored);
    expect(next).toMatchObject({ client_id: "b", client_secret: stored.client_secret });
    expect(next.scope).toBeUndefined();
    await expect(mergeConfigurations(deps, { token_url: "http://169.254.169.254/token" })).rejects.toMatchObject({
      status: 400,
    });
    expect((await mergeConfigurations(deps, { token_url: "http://127.0.0.1:9/token" })).token_url).toBe(
      "http://127.0.0.1:9/token",
    );
  });

  it("asks each auth type for what it needs", async () => {
    expect(() => checkConfigurations("oauth_client_credentials", { client_id: "a" })).toThrow(/client_secret/);
    expect(() => checkConfigurations("headers", {})).toThrow(/header/);
    expect(() => checkConfigurations("none", {})).not.toThrow();
    expect(() => checkConfigurations("oauth_auto", {})).not.toThrow();
  });
});

describe("a pushed sync", () => {
  const integration = {
    capabilities: [{ name: "kept_off", type: "tool", enabled: false }],
    server_info: { sync_status: "never" },
  } as unknown as McpIntegration;

  it("reads camelCase and snake_case keys and keeps the admin's switches", () => {
    const snapshot = snapshotFromBody(integration, {
      server_info: { name: "srv", version: "1", website_url: "https://example.com", protocolVersion: "2025-06-18" },
      capabilities: [
        { name: "kept_off", type: "tool", inputSchema: { type: "object" } },
        { name: "new_tool", input_schema: { type: "object", properties: {} }, outputSchema: { type: "object" } },
        { type: "prompt", name: "p", arguments: [{ name: "x" }] },
        { type: "resource", uri: "memo://a", mimeType: "text/plain" },
        { uri_template: "memo://t/{id}" },
        { type: "tool" },
      ],
    });
    expect(snapshot.server_info).toMatchObject({
      server_name: "srv",
      server_version: "1",
      website_url: "https://example.com",
      protocol_version: "2025-06-18",
      sync_status: "synced",
    });
    expect(snapshot.capabilities.map((item) => [item.type, item.name, item.enabled])).toEqual([
      ["tool", "kept_off", false],
      ["tool", "new_tool", true],
      ["prompt", "p", true],
      ["resource", "memo://a", true],
      ["resource_template", "memo://t/{id}", true],
    ]);
    expect(snapshot.capabilities[1]!.schema).toEqual({
      inputSchema: { type: "object", properties: {} },
      outputSchema: { type: "object" },
    });
  });
});
