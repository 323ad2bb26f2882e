import { api } from "../../api.ts";
import { formatCost } from "../../format.ts";
import { ErrorBanner, Table, useAsync } from "../../ui/index.ts";

/** GET /v1/analytics/reconciliation (core/observe/reconciliation/presentation.ts). */
interface Reconciliation {
  integration_id: string;
  slug: string;
  provider: string;
  drift_threshold_percent: number | null;
  days: Array<{
    day: string;
    ledger_usd: number;
    bill_usd: number;
    drift_usd: number;
    drift_percent: number | null;
    threshold_percent: number;
    flagged: boolean;
  }>;
}

/**
 * The gateway's ledger against each provider's own bill, per day, for the saved providers that carry an admin key:
 * a day whose drift passes the threshold is flagged.
 */
export function LedgerVsBill() {
  const list = useAsync(() => api<{ data: Reconciliation[] }>("/v1/analytics/reconciliation"), []);
  const rows = list.data?.data ?? [];
  return (
    <section aria-labelledby="reconciliation-title">
      <h2 id="reconciliation-title">Ledger vs. provider bill</h2>
      <ErrorBanner error={list.error} />
      {rows.length === 0 && !list.error && (
        <p class="muted">
          No saved provider is reconciled yet: give an OpenAI or Anthropic integration its admin key
          (configurations.admin_api_key).
        </p>
      )}
      {rows.map((entry) => (
        <Table
          key={entry.integration_id}
          caption={`${entry.slug} (${entry.provider})`}
          rows={[...entry.days].reverse()}
          rowKey={(day) => day.day}
          empty="Not reconciled yet."
          columns={[
            { header: "Day", cell: (day) => day.day },
            { header: "Ledger", cell: (day) => formatCost(day.ledger_usd), numeric: true },
            { header: "Bill", cell: (day) => formatCost(day.bill_usd), numeric: true },
            { header: "Drift", cell: (day) => formatCost(day.drift_usd), numeric: true },
            {
              header: "Drift %",
              cell: (day) => (day.drift_percent === null ? "—" : `${day.drift_percent.toFixed(1)}%`),
              numeric: true,
            },
            {
              header: "",
              cell: (day) =>
                day.flagged ? (
                  <span class="badge badge-error" title={`over ${day.threshold_percent}%`}>
                    drift
                  </span>
                ) : (
                  "ok"
                ),
            },
          ]}
        />
      ))}
    </section>
  );
}
