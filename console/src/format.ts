/** Display helpers shared by pages. */

export const formatCost = (usd: number | null | undefined): string =>
  usd === undefined || usd === null ? "—" : `$${usd < 0.01 && usd > 0 ? usd.toFixed(6) : usd.toFixed(4)}`;

export const formatNumber = (value: number | null | undefined): string =>
  value === undefined || value === null ? "—" : value.toLocaleString("en-US");

export const formatMs = (ms: number | null | undefined): string =>
  ms === undefined || ms === null ? "—" : ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;

export const formatPercent = (ratio: number | null | undefined): string =>
  ratio === undefined || ratio === null ? "—" : `${(ratio * 100).toFixed(1)}%`;

export const formatTime = (iso: string): string => {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString("en-GB", { hour12: false });
};

/** `<input type="datetime-local">` value <-> ISO time (the browser's zone). */
export const toLocalInput = (iso: string | null | undefined): string => {
  if (!iso) return "";
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const local = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return local.toISOString().slice(0, 16);
};
export const fromLocalInput = (value: string): string | undefined =>
  value ? new Date(value).toISOString() : undefined;

export const prettyJson = (value: unknown): string =>
  typeof value === "string" ? value : JSON.stringify(value, null, 2);
