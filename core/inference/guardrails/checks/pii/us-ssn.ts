import type { Finding } from "./categories.ts";

/**
 * US Social Security numbers written the usual way, `123-45-6789` (or with spaces), whose parts could have been
 * issued: the area is not 000, 666 or 900-999, the group not 00, the serial not 0000. Nine bare digits are left
 * alone: they are far more often an order or account number.
 */

const CANDIDATE = /(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g;

export function findUsSsns(text: string): Finding[] {
  const found: Finding[] = [];
  for (const match of text.matchAll(CANDIDATE)) {
    const [whole, area, , group, serial] = match as unknown as [string, string, string, string, string];
    if (area === "000" || area === "666" || area.startsWith("9") || group === "00" || serial === "0000") continue;
    found.push({ category: "US_SSN", start: match.index, end: match.index + whole.length });
  }
  return found;
}
