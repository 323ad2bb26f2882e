import type { Principal } from "../../auth/principal.ts";
import { boundWorkspace } from "../../control/credentials/credentials.ts";
import { findIntegration } from "../../control/integrations/store.ts";
import type { Records } from "../../store/ports.ts";
import { type ReconciledDay, reconciledDays } from "./reconcile.ts";
import { INDEX_PK } from "./reconciliation-index.ts";

/**
 * GET /v1/analytics/reconciliation[/:integration]: the gateway's ledger against the provider's bill per day, for
 * the integrations the caller may see. A provider's bill is the spend of everything its admin key covers, so a
 * workspace-bound caller sees only its own workspace's integrations (never an organisation-level one's bill).
 */

export interface ReconciliationView {
  integration_id: string;
  slug: string;
  provider: string;
  drift_threshold_percent: number | null;
  days: Array<Record<string, unknown>>;
}

const presentDay = (day: ReconciledDay) => ({
  day: day.day,
  ledger_usd: day.ledgerUsd,
  bill_usd: day.billUsd,
  drift_usd: day.driftUsd,
  drift_percent: day.driftPercent,
  threshold_percent: day.thresholdPercent,
  flagged: day.flagged,
  checked_at: day.checkedAt,
});

/** One integration's days, or undefined when there is none the caller may see. */
export async function reconciliationOf(
  records: Records,
  principal: Principal,
  idOrSlug: string,
  range: { from: string; to: string },
): Promise<ReconciliationView | undefined> {
  const integration = await findIntegration(records, principal.organisationId, idOrSlug);
  if (!integration) return undefined;
  const bound = boundWorkspace(principal);
  if (bound && integration.workspaceId !== bound) return undefined;
  const days = await reconciledDays(records, principal.organisationId, integration.id, range.from, range.to);
  return {
    integration_id: integration.id,
    slug: integration.slug,
    provider: integration.credentials.provider,
    drift_threshold_percent: integration.credentials.settings.reconciliation?.driftPercent ?? null,
    days: days.map(presentDay),
  };
}

/** Every reconciled integration of the organisation the caller may see. */
export async function reconciliations(
  records: Records,
  principal: Principal,
  range: { from: string; to: string },
): Promise<ReconciliationView[]> {
  const out: ReconciliationView[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({
      partition: INDEX_PK,
      prefix: `${principal.organisationId}#`,
      limit: 100,
      cursor,
    });
    for (const item of page.items) {
      const view = await reconciliationOf(records, principal, String(item.integrationId), range);
      if (view) out.push(view);
    }
    cursor = page.cursor;
  } while (cursor);
  return out;
}
