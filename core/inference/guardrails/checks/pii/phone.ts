import { setImmediate as nextTurn } from "node:timers/promises";
import { type CountryCode, findPhoneNumbersInText, isSupportedCountry } from "libphonenumber-js/max";
import type { Finding } from "./categories.ts";

/**
 * Phone numbers, by libphonenumber (full metadata, so a number must be valid for its country, not only of a
 * possible length). Numbers written with a `+` are found whatever their country; national ones are read as
 * numbers of `defaultCountry`.
 *
 * The library is slow: about a second for a megabyte of prose, 50 to 500 µs for each stretch of digits. So it
 * only reads the places a number can be (a run of digits and the characters written between them, holding at
 * least seven digits, with a margin either side for the context it checks: a letter glued to the digits, an
 * extension after them), and the scan gives the event loop a turn every few milliseconds and stops when the
 * check is aborted: a text made of nothing but digit groups takes seconds, never the event loop.
 */

const CANDIDATE = /\+?\(?\d[\d \t().\-/]{5,40}\d/g;
const MIN_DIGITS = 7;
// One character before: enough for the library's glued-letter test, too little to take the end of a number
// before (in `2671, 1-800-555-0199` it would read `, 1` as the extension of 2671).
const MARGIN_BEFORE = 1;
const MARGIN_AFTER = 16;
const SLICE_MS = 10;
/** libphonenumber reads `, 1` after a number as its extension: in a list of numbers it starts the next one. */
const COMMA_EXTENSION = /,\s*\d+$/;

export async function findPhoneNumbers(
  text: string,
  defaultCountry: CountryCode,
  signal: AbortSignal,
): Promise<Finding[]> {
  const found: Finding[] = [];
  let sliceStart = performance.now();
  for (const candidate of text.matchAll(CANDIDATE)) {
    if (countDigits(candidate[0]) < MIN_DIGITS) continue;
    const candidateEnd = candidate.index + candidate[0].length;
    const windowStart = Math.max(0, candidate.index - MARGIN_BEFORE);
    const window = text.slice(windowStart, Math.min(text.length, candidateEnd + MARGIN_AFTER));
    for (const match of findPhoneNumbersInText(window, { defaultCountry })) {
      const start = windowStart + match.startsAt;
      // A number starting in the margin belongs to the neighbouring candidate, which reads it itself.
      if (start < candidate.index || start >= candidateEnd) continue;
      let written = window.slice(match.startsAt, match.endsAt);
      if (match.number.ext && COMMA_EXTENSION.test(written)) written = written.replace(COMMA_EXTENSION, "");
      found.push({ category: "PHONE_NUMBER", start, end: start + written.length });
    }
    if (performance.now() - sliceStart > SLICE_MS) {
      await nextTurn();
      signal.throwIfAborted();
      sliceStart = performance.now();
    }
  }
  return found;
}

/** Whether libphonenumber knows the numbering plan of `country` (ISO 3166 alpha-2, capitals). */
export const isPhoneCountry = (country: string): country is CountryCode => isSupportedCountry(country);

function countDigits(text: string): number {
  let digits = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code >= 48 && code <= 57) digits++;
  }
  return digits;
}
