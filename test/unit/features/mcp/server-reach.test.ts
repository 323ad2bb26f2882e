import { describe, expect, it } from "vitest";
import type { Principal } from "../../../../core/auth/principal.ts";
import { serverInReach } from "../../../../core/features/mcp/endpoint/access.ts";
import type { McpServer } from "../../../../core/features/mcp/records.ts";

// The one rule the MCP endpoint, the tool host and the registry listing share.
describe("serverInReach", () => {
  const server = { workspaceId: "ws_a" } as McpServer;
  const principal = (fields: Partial<Principal>): Principal => ({
    kind: "api_key",
    organisationId: "org_1",
    scopes: ["*"],
    ...fields,
  });

  it("lets organisation-wide callers reach every workspace's servers", () => {
    expect(serverInReach(principal({ keyType: "organisation" }), server)).toBe(true);
    expect(serverInReach(principal({ kind: "jwt", organisationRole: "admin" }), server)).toBe(true);
  });

  it("lets a workspace-bound caller reach its own workspace's servers only", () => {
    expect(serverInReach(principal({ keyType: "workspace", workspaceId: "ws_a" }), server)).toBe(true);
    expect(serverInReach(principal({ keyType: "workspace", workspaceId: "ws_b" }), server)).toBe(false);
  });

  it("gives a caller bound to no workspace and not organisation-wide no server at all", () => {
    // The registry listing once read "no workspace" as "every workspace" for such a caller.
    expect(serverInReach(principal({ kind: "session", organisationRole: "member" }), server)).toBe(false);
    expect(serverInReach(principal({ kind: "jwt", organisationRole: "member", scopes: [] }), server)).toBe(false);
  });
});
