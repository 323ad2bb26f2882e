import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, rmdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * docs/conformance.md, written by the suites it reports (npm test): each suite measures its counts and records
 * its row here. The page is rendered deterministically from the rows alone, so a run that measures what the
 * page already says leaves the file byte for byte as it was, whatever the commit; a row whose counts (or suite
 * version) changed is rewritten with the commit it was measured at, and the suite's test fails until the new
 * page is committed. Rows are keyed by suite and requirement set; their order is fixed below.
 */

export interface ConformanceCounts {
  /** The version of the suite (or its requirement set's tool) that measured the row. */
  version: string;
  passed: number;
  failed: number;
  expectedFailures: number;
}

export interface ConformanceRow extends ConformanceCounts {
  suite: string;
  requirements: string;
  /** Short commit the counts were measured at (kept while they do not change). */
  commit: string;
}

const PAGE = join(process.cwd(), "docs", "conformance.md");
const LOCK = join(process.cwd(), "docs", ".conformance.lock");

/** Every row the page has, in its order; a row not measured yet shows dashes. */
export const CONFORMANCE_ROWS: Array<Pick<ConformanceRow, "suite" | "requirements">> = [
  { suite: "MCP server (`@modelcontextprotocol/conformance`)", requirements: "2025-11-25" },
  { suite: "MCP server (`@modelcontextprotocol/conformance`)", requirements: "2026-07-28" },
  { suite: "A2A agent endpoint (`@a2a-js/sdk` client)", requirements: "A2A 1.0" },
  { suite: "A2A agent endpoint (`@a2a-js/sdk` client)", requirements: "A2A 0.3" },
  { suite: "Responses (after the Open Responses compliance tests)", requirements: "every provider" },
  { suite: "OpenAI OpenAPI validation of OpenAI-shaped answers", requirements: "openapi.json" },
];

const key = (row: Pick<ConformanceRow, "suite" | "requirements">) => `${row.suite}|${row.requirements}`;

/** Records a suite's measured row; answers the row the committed page had (undefined when it had none). */
export function recordConformance(
  measured: Omit<ConformanceRow, "commit">,
): Pick<ConformanceRow, keyof ConformanceCounts> | undefined {
  return withLock(() => {
    const text = existsSync(PAGE) ? readFileSync(PAGE, "utf8") : "";
    const rows = parseRows(text);
    const before = rows.get(key(measured));
    const unchanged =
      before !== undefined &&
      before.version === measured.version &&
      before.passed === measured.passed &&
      before.failed === measured.failed &&
      before.expectedFailures === measured.expectedFailures;
    if (!unchanged) rows.set(key(measured), { ...measured, commit: currentCommit() });
    const page = renderPage(rows);
    if (page !== text) writeFileSync(PAGE, page);
    return (
      before && {
        version: before.version,
        passed: before.passed,
        failed: before.failed,
        expectedFailures: before.expectedFailures,
      }
    );
  });
}

function renderPage(rows: Map<string, ConformanceRow>): string {
  const lines = CONFORMANCE_ROWS.map((slot) => {
    const row = rows.get(key(slot));
    if (!row) return `| ${slot.suite} | — | ${slot.requirements} | — | — | — | not measured yet |`;
    return `| ${row.suite} | ${row.version} | ${row.requirements} | ${row.passed} | ${row.failed} | ${row.expectedFailures} | ${row.commit} |`;
  });
  return `# Conformance

What the gateway's own suites measure against the protocols it speaks, written by \`npm test\` (the suites
record their rows; see test/helpers/conformance-page.ts). Counts are of scenarios (MCP) or checks (the
others). A row changes only when its counts or its suite's version change, with the commit they were measured
at; a test fails until the regenerated page is committed, so this page is always what CI measured.

| Suite | Version | Requirement set | Passed | Failed | Expected failures | Measured at |
| --- | --- | --- | --- | --- | --- | --- |
${lines.join("\n")}

- MCP: \`conformance server --requirements <revision>\` against \`/mcp/<server>\` fronting a reference upstream
  built with the MCP SDK v2 (test/e2e/mcp-conformance.test.ts). Expected failures, each with its reason:
  [2025-11-25](../test/conformance/mcp-2025-11-25.expected-failures.yaml),
  [2026-07-28](../test/conformance/mcp-2026-07-28.expected-failures.yaml). See [MCP gateway](mcp.md).
- A2A: agents built with \`@a2a-js/sdk\` (a 1.0 card and a 0.3 card) invoked, streamed, polled and cancelled
  through \`/v1/agents/<agent>\` by the SDK's clients of both versions (test/e2e/a2a-conformance.test.ts). See
  [Agents gateway](agents.md).
- Responses: the Open Responses compliance cases for every native and translated provider
  (test/e2e/responses-compliance.test.ts).
- OpenAPI: every JSON answer and stream event of chat completions, completions, embeddings, moderations, models,
  files, batches and responses, read by the \`openai\` SDK on OpenAI and on every provider translated or relayed
  for that family, validated against OpenAI's OpenAPI document (test/e2e/openapi-conformance.test.ts; expected
  failures and their reasons listed there).
`;
}

/** Rows of the committed page's table (any row whose seven cells parse). */
function parseRows(text: string): Map<string, ConformanceRow> {
  const rows = new Map<string, ConformanceRow>();
  for (const line of text.split("\n")) {
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells.length !== 7) continue;
    const [suite, version, requirements, passed, failed, expectedFailures, commit] = cells as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (!/^\d+$/.test(passed) || !/^\d+$/.test(failed) || !/^\d+$/.test(expectedFailures)) continue;
    const row = {
      suite,
      version,
      requirements,
      passed: Number(passed),
      failed: Number(failed),
      expectedFailures: Number(expectedFailures),
      commit,
    };
    rows.set(key(row), row);
  }
  return rows;
}

/** The version of an installed package (a suite's tool or client), for a row's Version. */
export function installedVersion(name: string): string {
  const manifest = join(process.cwd(), "node_modules", name, "package.json");
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

function currentCommit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

const STALE_LOCK_MS = 60_000;
const lockAgeMs = () => {
  try {
    return Date.now() - statSync(LOCK).mtimeMs;
  } catch {
    return 0;
  }
};

/** Suites run in parallel workers: one writer at a time (a directory is created atomically). */
function withLock<T>(work: () => T): T {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // A lock left by a run that died holding it (no writer holds it for more than a moment) is taken over.
      if (lockAgeMs() > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`docs/conformance.md stayed locked (${LOCK}).`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
    }
  }
  try {
    return work();
  } finally {
    rmdirSync(LOCK);
  }
}
