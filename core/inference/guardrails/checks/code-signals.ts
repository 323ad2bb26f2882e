/**
 * Finding code that is not fenced, for `default.containsCode`: each line is scored by the syntax it shows
 * (a `def f(x):` line, `#include <stdio.h>`, `SELECT ... FROM ... WHERE`, a line ending in `{`...), and a run of
 * scored lines is code when it holds one unmistakable line or several lines that together look like code.
 * It is written to stay quiet on prose: recipes, emails and lists never show the shapes scored high, and a
 * stray `x = 5` or a line ending in `;` alone is not enough. Every pattern is anchored and without nested
 * repetition, and lines over MAX_LINE characters are not scored, so the whole is linear in the text.
 */

/** Weight 3: unmistakable on its own; 2: code-like; 1: a hint that only counts with others. */
interface Rule {
  weight: 1 | 2 | 3;
  language?: string;
  test(line: string): boolean;
}

const MAX_LINE = 400;

const matches = (pattern: RegExp) => (line: string) => pattern.test(line);
const endsWithColon = (pattern: RegExp) => (line: string) => line.endsWith(":") && pattern.test(line);

const SQL_STATEMENT =
  /^(SELECT|INSERT INTO|UPDATE|DELETE FROM|CREATE (TABLE|INDEX|UNIQUE INDEX|VIEW)|DROP (TABLE|INDEX|VIEW)|ALTER TABLE|WITH [A-Za-z_]\w* AS \()\b/;
const SQL_CLAUSE =
  /^(FROM|WHERE|(INNER |LEFT |RIGHT |FULL |CROSS )?(OUTER )?JOIN|GROUP BY|ORDER BY|HAVING|LIMIT|OFFSET|VALUES|SET|UNION|AND|OR|ON|RETURNING)\b/;
const SQL_QUERY_ANY_CASE = /^select .+ from [a-z_][\w.]*/i;
const SQL_DETAIL = /( where [\w.]+ ?(=|<|>|!=|like |in ?\()| join |\*|;$)/i;

const RULES: readonly Rule[] = [
  // Python
  { weight: 3, language: "Python", test: endsWithColon(/^(async )?def [A-Za-z_]\w*\(/) },
  { weight: 3, language: "Python", test: endsWithColon(/^class [A-Za-z_]\w*[(:]/) },
  { weight: 3, language: "Python", test: matches(/^from [\w.]+ import [\w*(]/) },
  { weight: 2, language: "Python", test: matches(/^import [a-z_][\w.]*(, [a-z_][\w.]*)*( as [a-z_]\w*)?$/) },
  { weight: 2, language: "Python", test: endsWithColon(/^for [A-Za-z_]\w*(, ?[A-Za-z_]\w*)* in /) },
  { weight: 2, language: "Python", test: matches(/\bself\.\w/) },
  { weight: 1, language: "Python", test: endsWithColon(/^(if|elif|while|with|try|except|else|finally)\b/) },
  { weight: 1, language: "Python", test: matches(/^print\(/) },
  // JavaScript and TypeScript
  {
    weight: 3,
    language: "JavaScript",
    test: matches(/^(export )?(default )?(async )?function\*? ?[A-Za-z_$][\w$]* ?\(/),
  },
  { weight: 3, language: "JavaScript", test: matches(/^import .+ from ['"]/) },
  { weight: 3, language: "JavaScript", test: matches(/= require\(['"]/) },
  { weight: 2, language: "JavaScript", test: matches(/^(export )?(const|let|var) [A-Za-z_$][\w$]* ?(:[^=]*)?= ?\S/) },
  { weight: 2, language: "JavaScript", test: matches(/\bconsole\.(log|error|warn)\(/) },
  { weight: 3, language: "TypeScript", test: matches(/^(export )?interface [A-Z]\w* ?(\{|extends|<)/) },
  { weight: 2, language: "TypeScript", test: matches(/^(export )?type [A-Z]\w* ?(<[^>]*>)? ?= /) },
  // C family, Java, C#, Go, Rust, PHP, Ruby
  { weight: 3, language: "C++", test: matches(/^#include ?<\w+>$/) },
  { weight: 3, language: "C", test: matches(/^#include ?[<"][\w/.]+\.h[>"]$/) },
  { weight: 3, language: "C", test: matches(/^(int|void) main ?\(/) },
  { weight: 2, language: "C++", test: matches(/\bstd::\w|\bcout ?<</) },
  {
    weight: 3,
    language: "Java",
    test: (line) =>
      /^(public|private|protected) /.test(line) && line.includes("(") && /[{);]$/.test(line) && !line.includes(". "),
  },
  { weight: 2, language: "Java", test: matches(/\bSystem\.out\.print/) },
  { weight: 2, language: "Java", test: matches(/^package [a-z][\w.]*;$/) },
  { weight: 3, language: "C#", test: matches(/^using System(\.[\w.]+)?;$/) },
  { weight: 2, language: "C#", test: matches(/\bConsole\.Write(Line)?\(/) },
  { weight: 3, language: "Go", test: matches(/^func (\([^)]*\) )?[A-Za-z_]\w*\(/) },
  { weight: 2, language: "Go", test: matches(/^package [a-z]\w*$/) },
  { weight: 2, language: "Go", test: matches(/\bfmt\.(Print|Sprint|Fprint|Errorf)/) },
  { weight: 3, language: "Rust", test: matches(/^(pub )?(async )?fn [a-z_]\w*(<[^>]*>)?\(/) },
  { weight: 2, language: "Rust", test: matches(/^use [a-z_]+::|^let mut |\bprintln!\(/) },
  { weight: 3, language: "PHP", test: matches(/^<\?php\b/) },
  { weight: 2, language: "PHP", test: matches(/^\$[A-Za-z_]\w* ?= .*;$/) },
  { weight: 2, language: "Ruby", test: matches(/^def [a-z_]\w*[?!]?( ?\(.*\))?$/) },
  { weight: 2, language: "Ruby", test: matches(/^require(_relative)? ['"]/) },
  { weight: 1, language: "Ruby", test: matches(/^(end|puts .+)$/) },
  // Shell
  { weight: 3, language: "Shell", test: matches(/^#!\/(usr\/)?bin\//) },
  {
    weight: 2,
    language: "Shell",
    test: matches(
      /^(\$ )?(sudo |apt(-get)? install |brew install |npm (install|i|run|ci)\b|yarn (add|install)\b|pip3? install |git (clone|commit|push|pull|checkout|add) |docker (run|build|compose|pull) |kubectl |curl -|wget |chmod |export [A-Z_][A-Z0-9_]*=)/,
    ),
  },
  { weight: 1, language: "Shell", test: matches(/^\$ [a-z]/) },
  // SQL: upper-case statements and clauses; a lower-case query only with its details (a WHERE test, `*`, `;`).
  {
    weight: 3,
    language: "SQL",
    test: (line) => SQL_STATEMENT.test(line) && / (FROM|SET|VALUES|AS|ON) /.test(` ${line} `),
  },
  { weight: 3, language: "SQL", test: (line) => SQL_QUERY_ANY_CASE.test(line) && SQL_DETAIL.test(line) },
  { weight: 2, language: "SQL", test: matches(SQL_STATEMENT) },
  { weight: 1, language: "SQL", test: matches(SQL_CLAUSE) },
  // Markup and styles
  { weight: 3, language: "HTML", test: matches(/^<!doctype html/i) },
  {
    weight: 1,
    language: "HTML",
    test: matches(
      /^<\/?(html|head|body|div|span|script|style|table|tr|td|form|ul|ol|li|p|a|img|input|button|section|nav|header|footer|main)( [^>]*)?\/?>/i,
    ),
  },
  { weight: 1, language: "CSS", test: matches(/^[.#]?[a-z][\w-]*( [.#>+~]? ?[\w-]+)* ?\{$/i) },
  { weight: 1, language: "CSS", test: matches(/^[a-z-]+: [^;]+;$/) },
  // Any language
  { weight: 1, test: (line) => line.length > 1 && (line.endsWith("{") || line.endsWith(";")) },
  { weight: 1, test: matches(/^[})\]]+[;,)]*$/) },
  { weight: 1, test: matches(/ (==|!=|===|!==|&&|\|\||\+=|-=|=>) |->|::/) },
  { weight: 1, test: matches(/^[A-Za-z_][\w.]*(\[[^\]]*\])? ?(=|\+=|-=|\*=) ?[^=\s]/) },
  { weight: 1, test: matches(/^(return|break|continue)\b|^\/\/ /) },
];

export interface CodeRun {
  /** The language the run's lines point to most, or undefined when none does. */
  language?: string;
  lines: number;
}

interface LineScore {
  weight: number;
  language?: string;
}

function scoreLine(line: string): LineScore {
  if (line.length > MAX_LINE) return { weight: 0 };
  let best: LineScore = { weight: 0 };
  for (const rule of RULES) {
    if (rule.weight > best.weight && rule.test(line)) best = { weight: rule.weight, language: rule.language };
    if (best.weight === 3) break;
  }
  return best;
}

/**
 * The runs of code among consecutive lines: a stretch of a text outside its fenced blocks, or the content of an
 * untagged fence (`fenced`: the fence already says "not prose", so two hints or one code-like line suffice).
 */
export function codeRuns(lines: readonly string[], fenced = false): CodeRun[] {
  const runs: CodeRun[] = [];
  let run:
    | { weight: number; strongest: number; lines: number; scored: number; languages: Map<string, number> }
    | undefined;
  const isCode = (found: NonNullable<typeof run>) =>
    fenced
      ? found.weight >= 2
      : found.strongest >= 3 || (found.weight >= 4 && found.scored >= 2 && found.strongest >= 2);
  const close = () => {
    if (run && isCode(run)) {
      const language = [...run.languages].sort((a, b) => b[1] - a[1])[0]?.[0];
      runs.push({ language, lines: run.lines });
    }
    run = undefined;
  };
  for (const raw of lines) {
    const line = raw.trim();
    if (line === "") continue; // blank lines separate functions as often as paragraphs: they end nothing
    const { weight, language } = scoreLine(line);
    if (weight > 0) {
      run ??= { weight: 0, strongest: 0, lines: 0, scored: 0, languages: new Map() };
      run.weight += weight;
      run.strongest = Math.max(run.strongest, weight);
      run.scored++;
      run.lines++;
      if (language) run.languages.set(language, (run.languages.get(language) ?? 0) + weight);
    } else if (run && /^\s/.test(raw)) {
      run.lines++; // an indented line inside code (a string, a call's arguments) continues it
    } else {
      close();
    }
  }
  close();
  return runs;
}
