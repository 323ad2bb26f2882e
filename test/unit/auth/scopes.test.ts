import { describe, expect, it } from "vitest";
import type { Principal } from "../../../core/auth/principal.ts";
import { ALL_SCOPES, isKnownScope } from "../../../core/auth/scope-list.ts";
import { isOrganisationWide, managesWorkspace, requireAdmin, requireScope } from "../../../core/auth/scopes.ts";
import { normaliseRotationPeriod, rotationSettings } from "../../../core/control/api-keys/rules.ts";
import { ROUTE_FAMILIES } from "../../../core/routes/table.ts";

const INFERENCE_FAMILIES = new Set(["chat", "completions", "embeddings", "models", "passthrough"]);

describe("scopes", () => {
  it("every route scope is in ALL_SCOPES, and the spec's named scopes are there", () => {
    for (const family of ROUTE_FAMILIES) {
      for (const route of family.routes) {
        if (route.scope) expect(ALL_SCOPES, `${route.method} ${route.path}`).toContain(route.scope);
        if (route.organisationScope) {
          expect(ALL_SCOPES, `${route.method} ${route.path}`).toContain(route.organisationScope);
          expect(
            route.scope,
            `${route.method} ${route.path}: organisationScope is the other level of scope`,
          ).toBeTruthy();
        }
      }
    }
    for (const scope of [
      "logs.export",
      "logs.list",
      "logs.view",
      "virtual_keys.create",
      "virtual_keys.update",
      "organisation_settings.read",
      "organisation_settings.update",
      "organisation_guardrails.create",
      "organisation_guardrails.read",
      "organisation_guardrails.list",
      "organisation_guardrails.update",
      "organisation_guardrails.delete",
      "organisation_exclusions.list",
      "organisation_exclusions.update",
      "guardrails.invoke",
      "agents.invoke",
      // The MCP control plane (core/routes/table.ts family mcp-admin).
      ...["create", "read", "list", "update", "delete"].flatMap((action) => [
        `mcp_integrations.${action}`,
        `mcp_servers.${action}`,
      ]),
    ]) {
      expect(isKnownScope(scope), scope).toBe(true);
    }
    expect(isKnownScope("*")).toBe(true);
    expect(isKnownScope("logs.destroy")).toBe(false);
  });

  it("every authenticated control-plane route declares a scope (except /auth/self, which needs a JWT, and inference routes)", () => {
    for (const family of ROUTE_FAMILIES) {
      if (INFERENCE_FAMILIES.has(family.name) || family.dataPlane) continue;
      for (const route of family.routes) {
        // An inference route (a saved prompt's completions) is open to any key, like /v1/chat/completions.
        if (route.auth !== "api_key" || route.path === "/v1/auth/self" || route.inference) continue;
        expect(route.scope, `${route.method} ${route.path}`).toBeTruthy();
      }
    }
  });

  it("requireScope, requireAdmin and managesWorkspace", () => {
    const admin: Principal = { kind: "api_key", organisationId: "org_1", keyType: "organisation", scopes: ["*"] };
    const service: Principal = {
      kind: "api_key",
      organisationId: "org_1",
      workspaceId: "ws_a",
      keyType: "workspace",
      keySubType: "service",
      organisationRole: "owner",
      scopes: ["logs.list"],
    };
    const member: Principal = {
      kind: "api_key",
      organisationId: "org_1",
      workspaceId: "ws_a",
      keyType: "workspace",
      keySubType: "user",
      workspaceRole: "member",
      scopes: [],
    };
    const jwtAdmin: Principal = { kind: "jwt", organisationId: "org_1", organisationRole: "admin", scopes: [] };
    expect(() => requireScope(service, "logs.list")).not.toThrow();
    expect(() => requireScope(service, "logs.view")).toThrow(/logs\.view/);
    expect(() => requireScope(admin, "anything")).not.toThrow();
    // A route's organisation-level scope admits the caller too; the message names both.
    const organisationGuardrails = { ...service, scopes: ["organisation_guardrails.read"] };
    expect(() => requireScope(organisationGuardrails, "guardrails.read", "organisation_guardrails.read")).not.toThrow();
    expect(() => requireScope(service, "guardrails.read", "organisation_guardrails.read")).toThrow(
      "'guardrails.read' (or 'organisation_guardrails.read')",
    );
    expect(requireAdmin(admin)).toBe(admin);
    expect(() => requireAdmin(service)).toThrow(/admin/);
    expect(isOrganisationWide(jwtAdmin)).toBe(true);
    expect(isOrganisationWide({ ...jwtAdmin, workspaceId: "ws_a" })).toBe(false);
    expect(managesWorkspace(service, "ws_a")).toBe(true);
    expect(managesWorkspace(service, "ws_b")).toBe(false);
    expect(managesWorkspace(member, "ws_a")).toBe(false);
    expect(managesWorkspace({ ...member, workspaceRole: "manager" }, "ws_a")).toBe(true);
  });

  it("normalises rotation periods and keeps the two forms exclusive", () => {
    expect(normaliseRotationPeriod("weekly", "p")).toBe(7);
    expect(normaliseRotationPeriod("monthly", "p")).toBe(30);
    expect(normaliseRotationPeriod("45", "p")).toBe(45);
    expect(() => normaliseRotationPeriod(0, "p")).toThrow();
    expect(() => normaliseRotationPeriod(366, "p")).toThrow();
    const now = 1_000_000;
    expect(rotationSettings({ rotation_period_days: 10 }, { now })).toEqual({
      rotationPeriodDays: 10,
      nextRotationAt: now + 10 * 86_400,
    });
    expect(() => rotationSettings({ rotation_period: "weekly", rotation_period_days: 7 }, { now })).toThrow(/not both/);
    expect(() => rotationSettings({ next_rotation_at: now + 100 }, { now, enforcedDays: 30 })).toThrow(
      /cannot be set by hand/,
    );
    expect(rotationSettings({}, { now, enforcedDays: 30 })).toEqual({
      rotationPeriodDays: 30,
      nextRotationAt: now + 30 * 86_400,
    });
  });
});
