/**
 * What `default.pii` finds, and what a finding is. Kept apart from the detectors so that the check's definition
 * (loaded with the registry) can name the categories without loading the detectors and their libraries.
 */
export const PII_CATEGORIES = [
  "EMAIL_ADDRESS",
  "PHONE_NUMBER",
  "CREDIT_CARD",
  "IBAN",
  "US_SSN",
  "IP_ADDRESS",
  "SECRET",
] as const;

export type PiiCategory = (typeof PII_CATEGORIES)[number];

/** One piece of PII in a text: `text.slice(start, end)`. */
export interface Finding {
  category: PiiCategory;
  start: number;
  end: number;
}
