import { francAll } from "franc";
import { data as francTrigrams } from "franc/data.js";
import { expressions as francScripts } from "franc/expressions.js";
import { iso6393To1 } from "iso-639-3/iso6393-to-1.js";
import * as z from "zod";
import type { CheckDefinition } from "../types.ts";

/**
 * `default.language` (also `portkey.language`): passes when the text is in one of `language` (one code or a
 * list: ISO 639-1 `en`, ISO 639-3 `eng`, or Portkey's `eng_Latn`); `not` inverts (the text must be in none).
 * Detected with franc (trigram statistics, on the text's first 2,048 characters, as franc reads them).
 *
 * franc reads trigram statistics, which on short texts are unsure between close languages (Spanish and
 * Galician, Danish and Norwegian) and even with English. So, on a text under SHORT_LETTERS letters, every language
 * scoring within MARGIN of the best may be the text's, and a listed language among them passes the check: an
 * allow-list gives a short text the benefit of the doubt. Otherwise, and always with `not` (the text must be in
 * none of the listed languages), franc's best guess is judged. Only the most used languages and the listed ones
 * are weighed: franc's full set of 180 takes short English for Scots. A text with fewer than MIN_LETTERS letters
 * is too short to tell (unless its script has one language, like Korean hangul or Japanese kana) and passes,
 * saying so.
 */

const MARGIN = 0.2;
const MIN_LETTERS = 40;
const SHORT_LETTERS = 200;
const SAMPLE = 2_048;

/** What franc can tell: the languages of its trigram tables and those with a script of their own. */
const DETECTABLE = new Set<string>([
  ...Object.values(francTrigrams).flatMap((languages) => Object.keys(languages)),
  ...Object.keys(francScripts).filter((key) => /^[a-z]{3}$/.test(key)),
]);

/** ISO 639-3 macrolanguages, as the member languages franc reports (ISO 639-3 macrolanguage mappings). */
const MACROLANGUAGE_MEMBERS: Record<string, readonly string[]> = {
  ara: ["arb"],
  aym: ["ayr"],
  aze: ["azj"],
  est: ["ekk"],
  fas: ["pes", "prs"],
  ful: ["fuv", "fuf"],
  hbs: ["hrv", "srp", "bos"],
  kau: ["knc"],
  kon: ["kng"],
  kur: ["ckb"],
  lav: ["lvs"],
  mlg: ["plt"],
  mon: ["khk"],
  msa: ["zlm"],
  nep: ["npi"],
  nor: ["nob", "nno"],
  pus: ["pbu"],
  que: ["quz", "qug", "quy"],
  sqi: ["als"],
  swa: ["swh"],
  uzb: ["uzn"],
  yid: ["ydd"],
  zho: ["cmn"],
  // Filipino is the standard form of Tagalog (Portkey lists `fil_Latn`).
  fil: ["tgl"],
};

/** The languages weighed besides the listed ones: the most used, on the web and by speakers. */
const COMMON = `eng cmn spa arb por ind fra jpn rus deu kor tur ita pes pol vie nld hin tha heb ben swe ces ron ell ukr
  dan fin nob hun cat bul zlm hrv slk lit lvs srp slv ekk urd tgl azj tam tel mar kan mal guj pan swh uzn kaz bel mkd
  afr glg nno als hye kat npi sin khm mya amh pbu uig`.split(/\s+/);

const iso6391To3 = new Map(Object.entries(iso6393To1).map(([iso3, iso1]) => [iso1, iso3]));

/** The franc codes a listed language stands for (empty: franc cannot detect it). */
export function francCodes(code: string): string[] {
  const base = code.trim().toLowerCase().split(/[-_]/)[0] ?? "";
  const iso3 = base.length === 2 ? iso6391To3.get(base) : base;
  if (!iso3) return [];
  return (MACROLANGUAGE_MEMBERS[iso3] ?? [iso3]).filter((member) => DETECTABLE.has(member));
}

const languageCode = z.string().min(2).max(12);

const parameters = z.object({
  language: z.union([languageCode.transform((code) => [code]), z.array(languageCode).min(1).max(50)]),
  not: z.boolean().default(false),
});

type Parameters = z.infer<typeof parameters>;

const names = new Intl.DisplayNames("en", { type: "language" });
const nameOf = (code: string) => {
  try {
    return names.of(iso6393To1[code] ?? code) ?? code;
  } catch {
    return code;
  }
};

const LETTER = /\p{L}/gu;

export const language: CheckDefinition<Parameters> = {
  id: "default.language",
  aliases: ["portkey.language"],
  description: "Passes when the text is in one of the listed languages (ISO 639-1 or 639-3 codes); `not` inverts it.",
  parameters,
  // franc reads the text's first SAMPLE characters only.
  cost: (input) => Math.min(input.text.length, SAMPLE),
  selfContained: () => true,
  problem({ language: codes }) {
    const unknown = codes.filter((code) => francCodes(code).length === 0);
    if (unknown.length === 0) return undefined;
    return `language ${unknown.map((code) => `'${code.slice(0, 12)}'`).join(", ")} cannot be detected (an ISO 639-1 or 639-3 code of a language franc knows)`;
  },
  run(input, { language: codes, not }) {
    const listed = new Set(codes.flatMap(francCodes));
    const sample = input.text.slice(0, SAMPLE);
    const scores = francAll(sample, { only: [...new Set([...COMMON, ...listed])], minLength: 10 });
    const letters = sample.match(LETTER)?.length ?? 0;
    const detected = scores[0]![0];
    if (detected === "und" || (scores.length > 1 && letters < MIN_LETTERS)) {
      return {
        verdict: true,
        explanation: "The text is too short to tell its language; the check passes.",
        data: { detected: "und", not },
      };
    }
    const likely =
      letters < SHORT_LETTERS ? scores.filter(([, score]) => score >= 1 - MARGIN).map(([code]) => code) : [detected];
    const listedMatch = not ? (listed.has(detected) ? detected : undefined) : likely.find((code) => listed.has(code));
    const verdict = not ? listedMatch === undefined : listedMatch !== undefined;
    const guess = `franc's best guess is ${nameOf(detected)}`;
    return {
      verdict,
      explanation: listedMatch
        ? `The text is in ${nameOf(listedMatch)}${listedMatch === detected ? "" : ` (${guess}, too close to tell on a short text)`}, a listed language${not ? ", which it must not be" : ""}.`
        : `The text is not in a listed language (${guess})${not ? "" : ", which it must be"}.`,
      data: { detected, ...(listedMatch ? { matched: listedMatch } : {}), not },
    };
  },
};
