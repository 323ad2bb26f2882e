import type { Principal } from "../auth/principal.ts";
import type { Records } from "../store/ports.ts";
import { type AuditEntry, recordAudit } from "./audit.ts";

/**
 * What every control-plane service call is given besides the principal and its input: the records store and
 * the trace id of the call (kept in the audit entries it writes). Families add what else they need (caches to
 * invalidate, settings, other services) in their own Deps interface; handlers build them from the request.
 */
export interface ControlDeps {
  records: Records;
  traceId: string;
}

/** Writes the audit entry of a change made by `principal` in this call. */
export function audit(deps: ControlDeps, principal: Principal, entry: AuditEntry): Promise<void> {
  return recordAudit(deps.records, { ...entry, principal, traceId: deps.traceId });
}
