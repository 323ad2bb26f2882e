import type { Finding } from "./categories.ts";

/**
 * Email addresses, found from each `@` outwards rather than with one pattern: a pattern whose first token is
 * an unbounded character class restarts at every letter of a long word, which is quadratic on a long text.
 * Here every character is looked at a bounded number of times.
 */

const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;
const LOCAL_CHAR = /[A-Za-z0-9._%+-]/;
const DOMAIN_CHAR = /[A-Za-z0-9.-]/;
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
const TOP_LEVEL = /^[A-Za-z]{2,63}$/;

export function findEmails(text: string): Finding[] {
  const found: Finding[] = [];
  let from = 0;
  for (let at = text.indexOf("@", from); at !== -1; at = text.indexOf("@", from)) {
    let start = at;
    while (start > 0 && at - start < MAX_LOCAL && LOCAL_CHAR.test(text[start - 1]!)) start--;
    // A sentence's full stop before the address is not part of it.
    while (start < at && text[start] === ".") start++;
    let end = at + 1;
    while (end < text.length && end - at - 1 < MAX_DOMAIN && DOMAIN_CHAR.test(text[end]!)) end++;
    // Nor is one after it ("write to a@b.com.").
    while (end > at + 1 && (text[end - 1] === "." || text[end - 1] === "-")) end--;
    if (start < at && isDomain(text.slice(at + 1, end))) {
      found.push({ category: "EMAIL_ADDRESS", start, end });
      from = end;
    } else {
      from = at + 1;
    }
  }
  return found;
}

function isDomain(domain: string): boolean {
  const labels = domain.split(".");
  if (labels.length < 2) return false;
  return TOP_LEVEL.test(labels.at(-1)!) && labels.every((label) => LABEL.test(label));
}
