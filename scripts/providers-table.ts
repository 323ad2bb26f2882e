import { readFileSync, writeFileSync } from "node:fs";
import { loadAllProviders } from "../core/providers/registry.ts";
import type { RouteKind } from "../core/providers/types.ts";

/**
 * The README's provider x route table, generated from the registry so it cannot drift
 * (`npm run docs` rewrites it; a test fails when it is stale).
 */
const ROUTES: RouteKind[] = ["chat", "completions", "embeddings", "models"];
const START = "<!-- providers:start -->";
const END = "<!-- providers:end -->";

export async function providersTable(): Promise<string> {
  const providers = await loadAllProviders();
  const rows = providers
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((adapter) => {
      const cells = ROUTES.map((route) => {
        const routeAdapter = adapter.routes[route];
        if (!routeAdapter) return "";
        return routeAdapter.stream ? "✓ (stream)" : "✓";
      });
      return `| ${adapter.name} | \`${adapter.id}\` | ${cells.join(" | ")} |`;
    });
  return [
    `${providers.length} providers.`,
    "",
    `| Provider | \`x-gateway-provider\` | ${ROUTES.join(" | ")} |`,
    `|---|---|${ROUTES.map(() => "---").join("|")}|`,
    ...rows,
  ].join("\n");
}

export async function readmeWithTable(readme: string): Promise<string> {
  const start = readme.indexOf(START);
  const end = readme.indexOf(END);
  if (start === -1 || end === -1) throw new Error("README has no providers markers");
  return `${readme.slice(0, start + START.length)}\n${await providersTable()}\n${readme.slice(end)}`;
}

if (import.meta.main) {
  const path = new URL("../README.md", import.meta.url);
  writeFileSync(path, await readmeWithTable(readFileSync(path, "utf8")));
  console.log("README provider table updated");
}
