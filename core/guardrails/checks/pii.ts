import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { partsCost } from "../budget.ts";
import { type Finding, PII_CATEGORIES, type PiiCategory } from "./pii/categories.ts";

/**
 * `default.pii` (Portkey's `portkey.pii`): finds personal data and credentials in every text of the phase
 * (all the messages, not only the last: all of them go to the provider). Without `redact` it fails when it
 * finds any; with `redact` it passes and rewrites each finding as `[CATEGORY]`. Its data counts findings per
 * category, never their values. The detectors (and libphonenumber) are loaded by the first guardrail using it.
 */

let scan: typeof import("./pii/scan.ts") | undefined;

/** Portkey's name for a US Social Security number. */
const PORTKEY_SSN = "SSN";

const category = z.enum([...PII_CATEGORIES, PORTKEY_SSN], {
  error: () => `expected one of ${PII_CATEGORIES.join(", ")}`,
});

const parameters = z.object({
  /** Default: every category (including those added later). */
  categories: z
    .array(category)
    .min(1)
    .max(PII_CATEGORIES.length + 1)
    .transform((names) => [...new Set(names.map((name) => (name === PORTKEY_SSN ? "US_SSN" : name)))] as PiiCategory[])
    .optional(),
  redact: z.boolean().default(false),
  /** How national phone numbers (without `+`) are read: an ISO 3166 country code. */
  defaultCountry: z
    .string()
    .trim()
    .toUpperCase()
    .regex(/^[A-Z]{2}$/, "expected a two-letter country code such as US")
    .default("US"),
});

type Parameters = z.infer<typeof parameters>;

function scanner() {
  if (!scan) throw new Error("default.pii: the detectors are loaded by load() first");
  return scan;
}

export const pii: CheckDefinition<Parameters> = {
  id: "default.pii",
  aliases: ["portkey.pii"],
  description:
    "Finds emails, phone numbers, payment card numbers, IBANs, US SSNs, IP addresses and secrets (API keys, " +
    "tokens, private keys); fails when it finds any, or with `redact` replaces each with `[CATEGORY]`.",
  parameters,
  // Every part of the phase; on a worker thread its phone number scan is stopped with the thread.
  cost: partsCost,
  selfContained: () => true,
  async load() {
    scan ??= await import("./pii/scan.ts");
  },
  problem({ defaultCountry }) {
    if (!scanner().isPhoneCountry(defaultCountry)) return `defaultCountry '${defaultCountry}' is not a known country`;
    return undefined;
  },
  rewrites: ({ redact }) => redact,
  async run(input, { categories, redact, defaultCountry }) {
    const { scanText, redactText, isPhoneCountry } = scanner();
    // problem() refused unknown countries when the guardrail was saved; this also narrows the type.
    if (!isPhoneCountry(defaultCountry)) throw new Error(`default.pii: unknown defaultCountry '${defaultCountry}'`);
    const options = { categories: categorySet(categories), defaultCountry, signal: input.signal };
    // Every text the phase sends; a phase without parts (nothing to rewrite) is judged on its text.
    const texts = input.parts.length > 0 ? input.parts : [input.text];
    const findings: Finding[][] = [];
    for (const text of texts) findings.push(await scanText(text, options));
    const counts = countByCategory(findings.flat());
    const summary = Object.entries(counts)
      .map(([name, count]) => `${name} (${count})`)
      .join(", ");

    if (!summary) return { verdict: true, explanation: "No PII was found.", data: { counts } };
    if (!redact || input.parts.length === 0) {
      return { verdict: false, explanation: `Found PII: ${summary}.`, data: { counts } };
    }
    return {
      verdict: true,
      explanation: `Redacted PII: ${summary}.`,
      data: { counts, redacted: true },
      transformedParts: input.parts.map((part, index) => redactText(part, findings[index]!)),
    };
  },
};

const ALL_CATEGORIES: ReadonlySet<PiiCategory> = new Set(PII_CATEGORIES);

function categorySet(categories: readonly PiiCategory[] | undefined): ReadonlySet<PiiCategory> {
  return categories ? new Set(categories) : ALL_CATEGORIES;
}

/** Findings per category, in the order of PII_CATEGORIES (so explanations read the same every time). */
function countByCategory(findings: readonly Finding[]): Partial<Record<PiiCategory, number>> {
  const counts: Partial<Record<PiiCategory, number>> = {};
  for (const name of PII_CATEGORIES) {
    const count = findings.filter((finding) => finding.category === name).length;
    if (count > 0) counts[name] = count;
  }
  return counts;
}
