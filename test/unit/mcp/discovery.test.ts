import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTrustedHosts } from "../../../core/security/custom-host.ts";
import { loadSettings } from "../../../core/config/settings.ts";
import type { Services } from "../../../core/services.ts";
import { discoverUpstream, keepSwitches } from "../../../core/mcp/discovery.ts";
import type { McpIntegration } from "../../../core/mcp/records.ts";
import { sealValue } from "../../../core/control/sealed-values.ts";
import { type McpUpstream, startMcpUpstream } from "../../helpers/mcp-upstream.ts";

// A Secrets port that "seals" reversibly, enough for opening stored header values.
const secrets = {
  encrypt: async (plain: string) => Buffer.from(plain).toString("base64"),
  decrypt: async (sealed: string) => Buffer.from(sealed, "base64").toString("utf8"),
};

const services = (trusted: string) =>
  ({
    trustedHosts: parseTrustedHosts([trusted]),
    stores: { secrets },
    settings: loadSettings({}),
  }) as unknown as Services;

const integration = (url: string, extra: Partial<McpIntegration> = {}): McpIntegration => ({
  id: "mcpi_test",
  organisationId: "org_1",
  slug: "test",
  name: "Test",
  url,
  transport: "http",
  auth_type: "none",
  configurations: {},
  capabilities: [],
  server_info: {},
  workspaces: [],
  global_workspace_access: true,
  version: 1,
  createdAt: 0,
  updatedAt: 0,
  ...extra,
});

describe("discoverUpstream", () => {
  let upstream: McpUpstream;
  beforeAll(async () => {
    upstream = await startMcpUpstream({ requiredHeaders: { "x-upstream-key": "s3cret" } });
  });
  afterAll(() => upstream.close());

  it("reads server info, tools, prompts, resources and templates with the stored headers", async () => {
    const headers = { "X-Upstream-Key": await sealValue(secrets as never, "s3cret") };
    const snapshot = await discoverUpstream(
      services("127.0.0.1"),
      integration(upstream.url, { auth_type: "headers", configurations: { headers } }),
    );
    expect(snapshot.server_info).toMatchObject({
      server_name: "test-upstream",
      server_version: "1.2.3",
      instructions: "A test server.",
      sync_status: "synced",
    });
    const names = snapshot.capabilities.map((capability) => `${capability.type}:${capability.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "tool:echo",
        "tool:add",
        "tool:secret_admin_tool",
        "prompt:greet",
        "resource:memo://readme",
        "resource_template:memo://notes/{id}",
      ]),
    );
    const add = snapshot.capabilities.find((capability) => capability.name === "add");
    expect(add?.schema?.inputSchema).toMatchObject({ type: "object", required: ["a", "b"] });
    expect(upstream.requestHeaders.at(-1)?.["x-upstream-key"]).toBe("s3cret");
  });

  it("fails without the upstream's credentials, and refuses private hosts that are not trusted", async () => {
    await expect(discoverUpstream(services("127.0.0.1"), integration(upstream.url))).rejects.toThrow();
    await expect(discoverUpstream(services("example.com"), integration(upstream.url))).rejects.toThrow(
      /not allowed|private|blocked/i,
    );
  });

  it("keeps an admin's switches and enables what is new", () => {
    const before = [{ type: "tool" as const, name: "echo", enabled: false }];
    const now = [
      { type: "tool" as const, name: "echo", enabled: true },
      { type: "tool" as const, name: "add", enabled: true },
    ];
    expect(keepSwitches(before, now).map((capability) => capability.enabled)).toEqual([false, true]);
  });
});
