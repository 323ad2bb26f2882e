/**
 * The expected failures of a conformance suite that counts checks (test/e2e/responses-compliance.test.ts,
 * test/e2e/openapi-conformance.test.ts): each entry names the checks it covers and what their errors must match,
 * so that a check failing for another reason stays a failure, and says why.
 */
export interface ExpectedFailure {
  /** The checks (`case@target`) it covers. */
  cases: RegExp;
  /** What every error of such a check must match. */
  errors: RegExp;
  reason: string;
}

export interface CheckResult {
  /** `case@target`. */
  id: string;
  /** Its problems: none when it passed. */
  errors: string[];
}

export interface Tally {
  passed: number;
  /** Unexplained failures, each with its first errors. */
  failures: string[];
  /** The ids of the checks that failed as an entry says. */
  expected: string[];
  /** Reasons of entries some of whose checks now pass (the list only shrinks: narrow or remove them). */
  stale: string[];
}

export function tallyChecks(checks: CheckResult[], known: ExpectedFailure[]): Tally {
  const tally: Tally = { passed: 0, failures: [], expected: [], stale: [] };
  const stale = new Set<string>();
  for (const { id, errors } of checks) {
    const entry = known.find((candidate) => candidate.cases.test(id));
    if (errors.length === 0) {
      tally.passed++;
      if (entry) stale.add(entry.reason);
    } else if (entry && errors.every((error) => entry.errors.test(error))) tally.expected.push(id);
    else tally.failures.push(`${id}: ${errors.slice(0, 6).join("; ")}`);
  }
  tally.stale = [...stale];
  return tally;
}
