import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { type IncomingMessage, type Server, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recordConformance } from "../helpers/conformance-page.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { startConformanceUpstream } from "../helpers/mcp-conformance-upstream.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";

/**
 * The MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance server --requirements
 * <revision>`), for both revisions the gateway serves, against `/mcp/<server>` fronting the reference upstream
 * (test/helpers/mcp-conformance-upstream.ts, built with the MCP SDK v2: a 2025-11-25 client reaches it through
 * the gateway's bridge, a 2026-07-28 one natively). Each run's expected failures are in
 * test/conformance/mcp-<revision>.expected-failures.yaml, every entry with its reason; the suite itself fails on
 * any other failure and on an entry that passes. The counts go to docs/conformance.md (conformance-page.ts).
 *
 * The suite's client sends no credentials, so it reaches the gateway through a small local proxy that adds a
 * gateway API key to each request (the gateway itself still requires one).
 */

const SUITE = "MCP server (`@modelcontextprotocol/conformance`)";
/** The suite colours its summary; the counts are read without the colour codes. */
const ANSI_COLOUR = new RegExp(`${String.fromCharCode(27)}\\[\\d+m`, "g");
const REVISIONS = ["2025-11-25", "2026-07-28"] as const;
const conformanceVersion = () =>
  JSON.parse(readFileSync(join(process.cwd(), "node_modules/@modelcontextprotocol/conformance/package.json"), "utf8"))
    .version as string;
const baselineOf = (revision: string) =>
  join(process.cwd(), "test", "conformance", `mcp-${revision}.expected-failures.yaml`);

let gateway: TestGateway;
let upstream: Awaited<ReturnType<typeof startConformanceUpstream>>;
let keyProxy: Server;
let proxyUrl: string;
let workDir: string;

beforeAll(async () => {
  upstream = await startConformanceUpstream();
  // Tasks for calls past 300 ms, so the Tasks extension's scenarios see the gateway's own tasks.
  gateway = await startTestGateway({ MCP_TASK_AFTER_MS: "300" });
  const workspace = await seedWorkspace(gateway, "Conformance");
  const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
    name: "conformance",
    workspace_id: workspace.id,
    scopes: ["*"],
  });
  const { server } = await seedMcpServer(gateway, { url: upstream.url, workspaceId: workspace.id });
  keyProxy = createServer((request, response) => void forward(request, response, key.key));
  await new Promise<void>((resolve) => keyProxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(keyProxy.address() as AddressInfo).port}/mcp/${server.slug}`;
  workDir = mkdtempSync(join(tmpdir(), "mcp-conformance-"));
});

afterAll(async () => {
  keyProxy?.closeAllConnections();
  await new Promise((resolve) => keyProxy?.close(resolve));
  await gateway?.close();
  await upstream?.close();
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** Forwards one request to the gateway with the key added; streams the answer back (SSE included). */
async function forward(request: IncomingMessage, response: ServerResponse, key: string): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || ["host", "connection", "content-length"].includes(name)) continue;
    headers.set(name, Array.isArray(value) ? value.join(", ") : value);
  }
  headers.set("x-gateway-api-key", key);
  try {
    const answer = await fetch(`${gateway.url}${request.url}`, {
      method: request.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    response.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (answer.body) Readable.fromWeb(answer.body as never).pipe(response);
    else response.end();
  } catch {
    if (!response.headersSent) response.writeHead(502);
    response.end();
  }
}

function runConformance(args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [join(process.cwd(), "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js"), ...args],
      // Its results/ folder goes to the temporary directory.
      { cwd: workDir, timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, output: `${stdout}\n${stderr}` }),
    );
  });
}

describe("MCP conformance (server scenarios) through the gateway", () => {
  it.each(REVISIONS)("the expected failures of %s each carry a reason", (revision) => {
    const entries = readFileSync(baselineOf(revision), "utf8")
      .split("\n")
      .filter((line) => /^\s+- /.test(line));
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) expect(entry, entry).toMatch(/^\s+- [a-z0-9-]+ # \S.{20,}/);
  });

  it.each(REVISIONS)(
    "passes the %s requirement set but for its explained failures",
    { timeout: 600_000 },
    async (revision) => {
      const { code, output } = await runConformance([
        "server",
        "--url",
        proxyUrl,
        "--requirements",
        revision,
        "--expected-failures",
        baselineOf(revision),
      ]);
      const summary = output.slice(output.indexOf("=== SUMMARY ===")).replace(ANSI_COLOUR, "");
      console.log(summary);
      const scenarios = summary.split("\n").filter((line) => /^[✓✗] [a-z0-9-]+: \d+ passed, \d+ failed/.test(line));
      // The suite's verdicts (`~ name` expected, `✗ name` unexpected), and every scenario it marked failing.
      const listed = (heading: string, mark: string) => {
        const start = summary.indexOf(heading);
        if (start < 0) return [];
        const lines = summary.slice(start).split("\n").slice(1);
        const end = lines.findIndex((line) => !line.startsWith(`  ${mark} `));
        return lines.slice(0, end < 0 ? undefined : end).map((line) => line.slice(4).trim());
      };
      const baseline = new Set(
        readFileSync(baselineOf(revision), "utf8")
          .split("\n")
          .map((line) => /^\s+- ([a-z0-9-]+)/.exec(line)?.[1])
          .filter((name): name is string => name !== undefined),
      );
      const marked = scenarios.filter((line) => line.startsWith("✗")).map((line) => line.slice(2).split(":")[0]!);
      const expectedFailures = [
        ...new Set([
          ...listed("Expected failures (in baseline):", "~"),
          ...marked.filter((name) => baseline.has(name)),
        ]),
      ];
      const unexpected = [
        ...new Set([
          ...listed("Unexpected failures (not in baseline):", "✗"),
          ...marked.filter((name) => !baseline.has(name)),
        ]),
      ];
      expect(scenarios.length).toBeGreaterThan(25);
      expect(unexpected).toEqual([]);
      expect(summary).toContain("Baseline check passed");
      expect(code).toBe(0);
      const measured = {
        version: conformanceVersion(),
        passed: scenarios.length - expectedFailures.length - unexpected.length,
        failed: unexpected.length,
        expectedFailures: expectedFailures.length,
      };
      const committed = recordConformance({ suite: SUITE, requirements: revision, ...measured });
      expect(committed, "docs/conformance.md was regenerated with these counts: commit it").toEqual(measured);
    },
  );
});
