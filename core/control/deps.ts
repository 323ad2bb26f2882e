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

/**
 * Audits the change of one resource with its public view (a create has only `after`, a delete only `before`)
 * and answers the view of what it became: the one audit helper of the control-plane services' writes.
 */
export async function changed<T extends { id: string; workspaceId?: string }, V>(
  deps: ControlDeps,
  principal: Principal,
  change: { action: string; resourceType: string; before?: T; after?: T },
  present: (resource: T) => V,
): Promise<V | undefined> {
  const subject = (change.after ?? change.before)!;
  const after = change.after && present(change.after);
  await audit(deps, principal, {
    action: change.action,
    resourceType: change.resourceType,
    resourceId: subject.id,
    workspaceId: subject.workspaceId,
    before: change.before && present(change.before),
    after,
  });
  return after;
}
