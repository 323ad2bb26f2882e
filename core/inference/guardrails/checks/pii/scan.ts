import type { CountryCode } from "libphonenumber-js/max";
import type { Finding, PiiCategory } from "./categories.ts";
import { findEmails } from "./email.ts";
import { findIbans } from "./iban.ts";
import { findIpAddresses } from "./ip-address.ts";
import { findPaymentCards } from "./payment-card.ts";
import { findPhoneNumbers } from "./phone.ts";

export { isPhoneCountry } from "./phone.ts";
import { findSecrets } from "./secrets.ts";
import { findUsSsns } from "./us-ssn.ts";

/**
 * Runs the detectors of the chosen categories over a text and keeps one finding per stretch of it. Where two
 * overlap (a phone number inside a card number, an IPv4 tail inside an IPv6 address, digits inside a key),
 * the more specific detector wins, in the order of DETECTORS: secrets and emails first, phone numbers, whose
 * library is the most lenient, last.
 */

export interface ScanOptions {
  categories: ReadonlySet<PiiCategory>;
  defaultCountry: CountryCode;
  /** The check's: the phone number scan, which can take seconds, stops when it is aborted. */
  signal: AbortSignal;
}

type Detector = (text: string, options: ScanOptions) => Finding[] | Promise<Finding[]>;

const DETECTORS: ReadonlyArray<readonly [PiiCategory, Detector]> = [
  ["SECRET", findSecrets],
  ["EMAIL_ADDRESS", findEmails],
  ["CREDIT_CARD", findPaymentCards],
  ["IBAN", findIbans],
  ["US_SSN", findUsSsns],
  ["IP_ADDRESS", findIpAddresses],
  ["PHONE_NUMBER", (text, options) => findPhoneNumbers(text, options.defaultCountry, options.signal)],
];

/** The findings in `text`, in text order, none overlapping. */
export async function scanText(text: string, options: ScanOptions): Promise<Finding[]> {
  const kept: Finding[] = [];
  // Which characters a kept finding covers: findings are short, so checking a new one costs its length.
  const taken = new Uint8Array(text.length);
  for (const [category, detect] of DETECTORS) {
    if (!options.categories.has(category)) continue;
    const detected = detect(text, options);
    // Only the phone number scan may take turns of the event loop; the others answer at once.
    for (const finding of detected instanceof Promise ? await detected : detected) {
      if (taken.subarray(finding.start, finding.end).includes(1)) continue;
      taken.fill(1, finding.start, finding.end);
      kept.push(finding);
    }
  }
  return kept.sort((a, b) => a.start - b.start);
}

/** `text` with every finding replaced by its category in brackets (`[EMAIL_ADDRESS]`). */
export function redactText(text: string, findings: readonly Finding[]): string {
  let redacted = "";
  let from = 0;
  for (const finding of findings) {
    redacted += text.slice(from, finding.start) + `[${finding.category}]`;
    from = finding.end;
  }
  return redacted + text.slice(from);
}
