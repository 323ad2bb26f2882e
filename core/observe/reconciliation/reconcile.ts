import { openCredentials } from "../../control/credentials/credentials.ts";
import { findIntegration } from "../../control/integrations/store.ts";
import type { Services } from "../../services.ts";
import type { Records } from "../../store/ports.ts";
import { readLedger } from "./ledger.ts";
import { readBill } from "./provider-bills.ts";
import { INDEX_PK } from "./reconciliation-index.ts";

/**
 * Reconciliation of a saved provider's ledger (ledger.ts: what the gateway logged it cost) with the provider's
 * own bill (provider-bills.ts), per UTC day, for integrations that carry a provider admin key. Each run reads the
 * last DAYS complete days, stores one record per day (ledger, bill, drift, whether it passes the threshold) and is
 * throttled per integration (RUN_EVERY_MS), so the scheduled worker's one-minute tick costs one index read.
 */

export const DAYS = 7;
const RUN_EVERY_MS = 60 * 60 * 1000;
const DEFAULT_DRIFT_PERCENT = 5;
const RETENTION_SECONDS = 400 * 86_400;

export interface ReconciledDay {
  day: string;
  provider: string;
  ledgerUsd: number;
  billUsd: number;
  /** Ledger minus bill. */
  driftUsd: number;
  /** Of the bill (null when the bill is 0). */
  driftPercent: number | null;
  thresholdPercent: number;
  /** The drift passes the threshold (or the bill is 0 and the ledger is not). */
  flagged: boolean;
  checkedAt: string;
}

const dayRecordsPk = (organisationId: string, integrationId: string) => `RECON#${organisationId}#${integrationId}`;

/** Runs every indexed integration not reconciled within RUN_EVERY_MS; one's failure does not stop the others. */
export async function reconcileAll(services: Services, signal: AbortSignal, now = Date.now()): Promise<void> {
  let cursor: string | undefined;
  do {
    const page = await services.stores.records.query({ partition: INDEX_PK, limit: 100, cursor });
    for (const item of page.items) {
      if (signal.aborted) return;
      if (now - Number(item.lastRunAt ?? 0) < RUN_EVERY_MS) continue;
      const organisationId = String(item.organisationId);
      const integrationId = String(item.integrationId);
      await services.stores.records.put({ ...item, lastRunAt: now });
      await reconcileIntegration(services, organisationId, integrationId, signal, now).catch((error) =>
        console.warn(`reconciliation: ${integrationId} failed: ${(error as Error).message}`),
      );
    }
    cursor = page.cursor;
  } while (cursor);
}

/** Reconciles the last DAYS complete UTC days of one integration and stores each day's record. */
export async function reconcileIntegration(
  services: Services,
  organisationId: string,
  integrationId: string,
  signal: AbortSignal,
  now = Date.now(),
): Promise<ReconciledDay[]> {
  const { records, counters, secrets } = services.stores;
  const integration = await findIntegration(records, organisationId, integrationId);
  if (!integration) {
    await records.delete(INDEX_PK, `${organisationId}#${integrationId}`);
    return [];
  }
  const adminKey = (await openCredentials(secrets, integration.credentials)).adminApiKey;
  if (!adminKey) return [];
  const days = lastCompleteDays(now, DAYS);
  const to = dayOf(now);
  const [bill, ledger] = await Promise.all([
    readBill({
      provider: integration.credentials.provider,
      adminKey,
      customHost: integration.credentials.settings.customHost,
      from: days[0]!,
      to,
      trusted: services.trustedHosts,
      signal,
    }),
    readLedger(counters, organisationId, integration.id, days),
  ]);
  const threshold = integration.credentials.settings.reconciliation?.driftPercent ?? DEFAULT_DRIFT_PERCENT;
  const checkedAt = new Date(now).toISOString();
  const reconciled = days.map((day) => {
    const ledgerUsd = ledger.get(day) ?? 0;
    const billUsd = bill.get(day) ?? 0;
    const driftUsd = ledgerUsd - billUsd;
    const driftPercent = billUsd > 0 ? (driftUsd / billUsd) * 100 : null;
    const flagged = driftPercent === null ? ledgerUsd > 0 : Math.abs(driftPercent) > threshold;
    return {
      day,
      provider: integration.credentials.provider,
      ledgerUsd,
      billUsd,
      driftUsd,
      driftPercent,
      thresholdPercent: threshold,
      flagged,
      checkedAt,
    };
  });
  const ttl = Math.floor(now / 1000) + RETENTION_SECONDS;
  await Promise.all(
    reconciled.map((entry) =>
      records.put({ pk: dayRecordsPk(organisationId, integration.id), sk: entry.day, ttl, ...entry }),
    ),
  );
  return reconciled;
}

/** The stored days of an integration between two days (inclusive), oldest first. */
export async function reconciledDays(
  records: Records,
  organisationId: string,
  integrationId: string,
  from: string,
  to: string,
): Promise<ReconciledDay[]> {
  const out: ReconciledDay[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({
      partition: dayRecordsPk(organisationId, integrationId),
      from,
      to: `${to}~`,
      limit: 400,
      cursor,
    });
    for (const { pk, sk, ttl, ...day } of page.items) out.push(day as unknown as ReconciledDay);
    cursor = page.cursor;
  } while (cursor);
  return out;
}

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The `count` UTC days before today's, oldest first. */
function lastCompleteDays(now: number, count: number): string[] {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return Array.from({ length: count }, (_, index) => dayOf(today - (count - index) * DAY_MS));
}
