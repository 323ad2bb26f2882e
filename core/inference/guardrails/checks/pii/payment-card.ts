import type { Finding } from "./categories.ts";

/**
 * Payment card numbers: 13 to 19 digits, optionally grouped with single spaces or dashes, that pass the Luhn
 * checksum and start with a card network's prefix at a length that network issues. One random number in ten
 * passes Luhn, so the prefix table is what keeps order numbers and millisecond timestamps out.
 */

// A digit run that is not part of a longer one: a bounded repetition, so each start costs at most 19 steps.
const CANDIDATE = /(?<!\d[ -]?)\d(?:[ -]?\d){12,18}(?![ -]?\d)/g;

/** [lowest prefix, highest prefix, lengths issued]: the prefixes of a row have the same number of digits. */
const NETWORKS: ReadonlyArray<readonly [string, string, readonly number[]]> = [
  ["4", "4", [13, 16, 19]], // Visa
  ["51", "55", [16]], // Mastercard
  ["2221", "2720", [16]], // Mastercard (2-series)
  ["34", "34", [15]], // American Express
  ["37", "37", [15]],
  ["6011", "6011", [16, 17, 18, 19]], // Discover
  ["644", "649", [16, 17, 18, 19]],
  ["65", "65", [16, 17, 18, 19]],
  ["300", "305", [14, 15, 16, 17, 18, 19]], // Diners Club
  ["36", "36", [14, 15, 16, 17, 18, 19]],
  ["38", "39", [16, 17, 18, 19]],
  ["3528", "3589", [16, 17, 18, 19]], // JCB
  ["62", "62", [16, 17, 18, 19]], // UnionPay
  ["2200", "2204", [16, 17, 18, 19]], // Mir
  ["5018", "5018", [13, 14, 15, 16, 17, 18, 19]], // Maestro
  ["5020", "5020", [13, 14, 15, 16, 17, 18, 19]],
  ["5038", "5038", [13, 14, 15, 16, 17, 18, 19]],
  ["5893", "5893", [13, 14, 15, 16, 17, 18, 19]],
  ["6304", "6304", [13, 14, 15, 16, 17, 18, 19]],
  ["6759", "6759", [13, 14, 15, 16, 17, 18, 19]],
  ["6761", "6763", [13, 14, 15, 16, 17, 18, 19]],
];

export function findPaymentCards(text: string): Finding[] {
  const found: Finding[] = [];
  for (const match of text.matchAll(CANDIDATE)) {
    const digits = match[0].replace(/[ -]/g, "");
    if (isIssued(digits) && passesLuhn(digits)) {
      found.push({ category: "CREDIT_CARD", start: match.index, end: match.index + match[0].length });
    }
  }
  return found;
}

function isIssued(digits: string): boolean {
  return NETWORKS.some(([low, high, lengths]) => {
    const prefix = digits.slice(0, low.length);
    return prefix >= low && prefix <= high && lengths.includes(digits.length);
  });
}

/** The Luhn checksum: from the right, every second digit doubled (less 9 above 9); the sum ends in 0. */
export function passesLuhn(digits: string): boolean {
  let sum = 0;
  for (let index = 0; index < digits.length; index++) {
    let digit = digits.charCodeAt(digits.length - 1 - index) - 48;
    if (index % 2 === 1) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
  }
  return sum % 10 === 0;
}
