import { expect } from "vitest";
import type { Principal } from "../../core/auth/principal.ts";
import type { Records } from "../../core/store/ports.ts";

/** Helpers of the tests that call control-plane services directly (test/unit/control/*services.test.ts). */

/** Runs `call` and returns what it threw (fails when it did not throw). */
export async function thrown(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.fail("expected the call to throw"),
    (error: unknown) => error,
  );
}

/** The organisation's audit entries written with this trace id, newest first. */
export async function auditEntries(records: Records, organisationId: string, traceId: string) {
  const page = await records.query({
    partition: `ORG#${organisationId}#AUDIT`,
    index: "gsi1",
    order: "desc",
    limit: 200,
  });
  return page.items.filter((item) => item.traceId === traceId);
}

let seq = 0;
/** A name no other test of the run uses (tests share one store). */
export const unique = (prefix: string) => `${prefix}-${++seq}-${Math.random().toString(36).slice(2, 7)}`;

/** An organisation service key holding every scope. */
export const adminPrincipal = (organisationId: string): Principal => ({
  kind: "api_key",
  organisationId,
  keyId: "key_admin",
  keyType: "organisation",
  keySubType: "service",
  organisationRole: "owner",
  scopes: ["*"],
});

/** A service key of one workspace. */
export const workspacePrincipal = (organisationId: string, workspaceId: string, scopes = ["*"]): Principal => ({
  kind: "api_key",
  organisationId,
  workspaceId,
  keyId: `key_ws_${workspaceId}`,
  keyType: "workspace",
  keySubType: "service",
  scopes,
});
