import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTING_NAMES } from "../../core/config/settings.ts";
import { PROVIDER_IDS } from "../../core/providers/registry.ts";
import { PROVIDERS_PAGE, withProvidersTable } from "../../scripts/providers-table.ts";

/** The README and docs/: what a newcomer reads first must be short, current, and link only to what exists. */

const ROOT = resolve(import.meta.dirname, "../..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const readme = read("README.md");
// Markdown pages only: docs/ also holds folders of images (docs/console/*.png).
const PAGES = [
  "README.md",
  "bench/README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

const anchorsOf = (markdown: string) =>
  new Set([...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) => anchorOf(match[1]!)));

/** Relative links of a markdown page, outside code blocks: `[text](target)`. */
function linksOf(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, "");
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!).filter((target) => !/^[a-z]+:/.test(target));
}

describe("README", () => {
  it("starts with the two commands a newcomer needs, and package.json has both", () => {
    expect(readme).toContain("npm install && npm start");
    expect(readme).toMatch(/^npm test\b/m);
    const scripts = JSON.parse(read("package.json")).scripts;
    expect(scripts.start).toEqual(expect.any(String));
    expect(scripts.test).toEqual(expect.any(String));
  });

  it("shows the first curl, openai SDK and portkey-ai SDK calls (test/e2e/readme-quickstart.test.ts runs them)", () => {
    expect(readme).toContain("curl http://localhost:8787/v1/chat/completions");
    expect(readme).toContain('import OpenAI from "openai"');
    expect(readme).toContain('import { Portkey } from "portkey-ai"');
  });

  it("stays a short front page: reference and tuning live in docs/ and bench/README.md", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(150);
    expect(readme).not.toMatch(/µs/);
  });

  it("links every page of docs/", () => {
    for (const page of PAGES.filter((path) => path.startsWith("docs/"))) expect(readme).toContain(`](${page})`);
  });
});

describe("docs", () => {
  it("has the current provider table (run `npm run docs` after adding a provider)", async () => {
    const page = readFileSync(PROVIDERS_PAGE, "utf8");
    expect(page).toBe(await withProvidersTable(page));
  });

  it("lists at least 40 providers", () => {
    expect(PROVIDER_IDS.length).toBeGreaterThanOrEqual(40);
  });

  it("documents every environment variable the gateway reads in docs/configuration.md", () => {
    const configuration = read("docs/configuration.md");
    expect(SETTING_NAMES.length).toBeGreaterThan(10);
    for (const name of SETTING_NAMES) {
      expect(configuration, `docs/configuration.md must document ${name}`).toContain(`| \`${name}\` |`);
    }
  });

  it("links only to files of the repository that exist, and to headings they have", () => {
    for (const page of PAGES) {
      for (const link of linksOf(read(page))) {
        const [path, anchor] = link.split("#") as [string, string | undefined];
        const target = path === "" ? join(ROOT, page) : resolve(ROOT, dirname(page), path);
        expect(relative(ROOT, target).startsWith(".."), `${page} links outside the repository: ${link}`).toBe(false);
        expect(existsSync(target), `${page} links to a missing file: ${link}`).toBe(true);
        if (anchor && target.endsWith(".md")) {
          expect(anchorsOf(readFileSync(target, "utf8")), `${page}: no heading for ${link}`).toContain(anchor);
        }
      }
    }
  });
});
