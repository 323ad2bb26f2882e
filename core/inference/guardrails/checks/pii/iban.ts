import type { Finding } from "./categories.ts";

/**
 * IBANs (ISO 13616), written in capitals, whole or in groups separated by single spaces: a country code, two
 * check digits, then exactly the length that country's IBANs have, and the ISO 7064 mod-97 checksum.
 */

/** The IBAN length of each country in the SWIFT IBAN registry. */
// biome-ignore format: a table reads better packed
const LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28, CH: 21,
  CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FK: 18, FO: 18,
  FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HN: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23,
  IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27,
  MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18, NO: 15, OM: 23, PK: 24, PL: 28,
  PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27,
  SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20, YE: 30,
};

const START = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}/g;
const BODY_CHAR = /[A-Z0-9]/;
const WORD_CHAR = /[A-Za-z0-9]/;

export function findIbans(text: string): Finding[] {
  const found: Finding[] = [];
  for (const match of text.matchAll(START)) {
    if (match.index < (found.at(-1)?.end ?? 0)) continue;
    const length = LENGTHS[match[0].slice(0, 2)];
    if (!length) continue;
    const end = readGrouped(text, match.index, length);
    if (end !== undefined && passesMod97(text.slice(match.index, end).replaceAll(" ", ""))) {
      found.push({ category: "IBAN", start: match.index, end });
    }
  }
  return found;
}

/** Where `length` capitals and digits from `start` end, with single spaces allowed between them; undefined
 * when fewer follow or the last one is glued to more. */
function readGrouped(text: string, start: number, length: number): number | undefined {
  let position = start;
  for (let count = 0; count < length; count++) {
    if (count > 0 && text[position] === " ") position++;
    if (position >= text.length || !BODY_CHAR.test(text[position]!)) return undefined;
    position++;
  }
  return position < text.length && WORD_CHAR.test(text[position]!) ? undefined : position;
}

/** ISO 7064 mod 97-10: the first four characters moved to the end, letters as 10 to 35, the number mod 97 is 1. */
export function passesMod97(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const value = Number.parseInt(char, 36);
    remainder = value > 9 ? (remainder * 100 + value) % 97 : (remainder * 10 + value) % 97;
  }
  return remainder === 1;
}
