import type { IntegrationResource } from "../../control/integrations/store.ts";
import type { Records } from "../../store/ports.ts";

/**
 * The integrations the reconciliation task visits (reconcile.ts): those of a provider whose cost report it reads
 * that carry an admin key. One partition, kept in step by the integration service on every save and delete, so the
 * task never lists organisations.
 */
export const INDEX_PK = "RECONIDX";

/** Providers whose own cost report the gateway reads (provider-bills.ts). */
export const BILLED_PROVIDERS: ReadonlySet<string> = new Set(["openai", "anthropic"]);

export async function syncReconciliationIndex(
  records: Records,
  integration: Pick<IntegrationResource, "id" | "organisationId" | "credentials">,
  deleted = false,
): Promise<void> {
  const sk = `${integration.organisationId}#${integration.id}`;
  const wanted =
    !deleted &&
    BILLED_PROVIDERS.has(integration.credentials.provider) &&
    integration.credentials.hints.admin_api_key !== undefined;
  if (!wanted) return records.delete(INDEX_PK, sk);
  if (await records.get(INDEX_PK, sk)) return;
  await records.put({
    pk: INDEX_PK,
    sk,
    organisationId: integration.organisationId,
    integrationId: integration.id,
    lastRunAt: 0,
  });
}
