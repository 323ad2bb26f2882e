import type { Principal } from "../auth/principal.ts";
import { newId } from "../util/ids.ts";
import { isCredentialField } from "../security/credential-fields.ts";
import type { Records } from "../store/ports.ts";

/**
 * Audit log of control-plane mutations: who (key, user), what (action), which resource, when, and the
 * state before and after with secrets redacted. Records: pk `AUDIT#<id>`, listed per organisation and
 * newest first through gsi1 (`ORG#<org>#AUDIT`). Kept for GATEWAY_AUDIT_RETENTION_DAYS (default 365).
 */
export interface AuditEntry {
  action: "create" | "update" | "delete" | string;
  resourceType: string;
  resourceId: string;
  workspaceId?: string;
  before?: unknown;
  after?: unknown;
}

const RETENTION_SECONDS = 365 * 86_400;

/** Deep copy with credential fields (core/security/credential-fields.ts) replaced, safe to keep in an audit trail. */
export function redact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redact);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [
        key,
        isCredentialField(key) && entry != null ? "[redacted]" : redact(entry),
      ]),
    );
  }
  return value;
}

/** An audit entry with who made the change and the trace id of the request that made it. */
export interface AuditRecordInput extends AuditEntry {
  principal: Principal;
  traceId: string;
}

/** Writes one audit entry from plain data: who (the principal), what, and the trace id of the call. */
export async function recordAudit(records: Records, entry: AuditRecordInput): Promise<void> {
  const { principal } = entry;
  const id = newId("audit");
  const now = Date.now();
  await records.put({
    pk: `AUDIT#${id}`,
    sk: "AUDIT",
    gsi1pk: `ORG#${principal.organisationId}#AUDIT`,
    gsi1sk: `${new Date(now).toISOString()}#${id}`,
    ttl: Math.floor(now / 1000) + RETENTION_SECONDS,
    id,
    organisationId: principal.organisationId,
    workspaceId: entry.workspaceId ?? principal.workspaceId,
    actor: { keyId: principal.keyId, userId: principal.userId, email: principal.userEmail, kind: principal.kind },
    action: entry.action,
    resourceType: entry.resourceType,
    resourceId: entry.resourceId,
    before: redact(entry.before),
    after: redact(entry.after),
    traceId: entry.traceId,
    createdAt: new Date(now).toISOString(),
  });
}
