import { readFileSync, writeFileSync } from "node:fs";
import { loadAllProviders } from "../core/providers/registry.ts";
import type { RouteKind } from "../core/providers/types.ts";

/**
 * The provider x route table of docs/providers.md, generated from the registry so it cannot drift
 * (`npm run docs` rewrites it; test/unit/readme.test.ts fails when it is stale).
 */
const ROUTES: RouteKind[] = ["chat", "completions", "embeddings", "models"];
/** The other families, named in one column by their route paths (images, audio, moderations, rerank, ocr). */
const OTHER_ROUTES: Array<[RouteKind, string]> = [
  ["image_generations", "images"],
  ["image_edits", "image edits"],
  ["speech", "speech"],
  ["transcriptions", "transcriptions"],
  ["translations", "translations"],
  ["moderations", "moderations"],
  ["rerank", "rerank"],
  ["ocr", "ocr"],
];
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
      const others = OTHER_ROUTES.filter(([route]) => adapter.routes[route]).map(([, name]) => name);
      return `| ${adapter.name} | \`${adapter.id}\` | ${cells.join(" | ")} | ${others.join(", ")} |`;
    });
  return [
    `${providers.length} providers.`,
    "",
    `| Provider | \`x-gateway-provider\` | ${ROUTES.join(" | ")} | other families |`,
    `|---|---|${ROUTES.map(() => "---").join("|")}|---|`,
    ...rows,
  ].join("\n");
}

export async function withProvidersTable(page: string): Promise<string> {
  const start = page.indexOf(START);
  const end = page.indexOf(END);
  if (start === -1 || end === -1) throw new Error(`no ${START} ... ${END} markers`);
  return `${page.slice(0, start + START.length)}\n${await providersTable()}\n${page.slice(end)}`;
}

export const PROVIDERS_PAGE = new URL("../docs/providers.md", import.meta.url);

if (import.meta.main) {
  writeFileSync(PROVIDERS_PAGE, await withProvidersTable(readFileSync(PROVIDERS_PAGE, "utf8")));
  console.log("docs/providers.md: provider table updated");
}
