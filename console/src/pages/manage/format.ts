/** A time for tables: local date and time, or a dash. */
export const when = (value: string | number | null | undefined) =>
  value === null || value === undefined || value === "" ? "—" : new Date(value).toLocaleString();

/** `datetime-local` input text as ISO 8601 (the API's time format), or undefined when empty. */
export const isoFromLocal = (value: string) => (value ? new Date(value).toISOString() : undefined);
