import type { Counters } from "../../store/ports.ts";
import type { RequestLog } from "../logs/log-record.ts";

/**
 * The gateway's ledger of one saved provider (integration): what the requests it answered cost, per UTC day, as
 * the logs priced them (nano-dollars in a counter per organisation, integration and day). Reconciliation
 * (reconcile.ts) compares it with the provider's own bill for the same day.
 */

/** Nano-dollars: a cheap request costs a few micro-dollars, so coarser units would round the ledger away. */
const NANO = 1_000_000_000;
/** Kept as long as the analytics' daily aggregates. */
const RETENTION_SECONDS = 400 * 86_400;

export const ledgerKey = (organisationId: string, integrationId: string, day: string) =>
  `LEDGER#${organisationId}#${integrationId}#${day}`;

/** A stored log's cost on its integration's ledger (a log observer: after the response, off its path). */
export async function recordLedger(counters: Counters, log: RequestLog): Promise<void> {
  if (!log.integrationId || !log.cost) return;
  const amount = Math.round(log.cost * NANO);
  if (amount <= 0) return;
  const day = log.createdAt.slice(0, 10);
  await counters.add(ledgerKey(log.organisationId, log.integrationId, day), amount, {
    expiresAt: Math.floor(Date.now() / 1000) + RETENTION_SECONDS,
  });
}

/** The ledger of these days, in USD. */
export async function readLedger(
  counters: Counters,
  organisationId: string,
  integrationId: string,
  days: string[],
): Promise<Map<string, number>> {
  const keys = days.map((day) => ledgerKey(organisationId, integrationId, day));
  const values = await counters.getMany(keys);
  return new Map(days.map((day, index) => [day, (values.get(keys[index]!) ?? 0) / NANO]));
}
