import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadSettings } from "../../core/config/settings.ts";
import { PROVIDERS } from "../../core/providers/registry.ts";
import { readmeWithTable } from "../../scripts/providers-table.ts";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("has the current provider table (run `npm run docs` after adding a provider)", () => {
    expect(readme).toBe(readmeWithTable(readme));
  });

  it("lists at least 40 providers", () => {
    expect(PROVIDERS.size).toBeGreaterThanOrEqual(40);
  });

  it("documents every environment variable the gateway reads", () => {
    const settingsSource = readFileSync(new URL("../../core/config/settings.ts", import.meta.url), "utf8");
    const names = [...settingsSource.matchAll(/^\s+([A-Z][A-Z0-9_]+): /gm)].map((match) => match[1]!);
    expect(names.length).toBeGreaterThan(10);
    expect(Object.keys(loadSettings({}))).toEqual(expect.arrayContaining(names));
    for (const name of names) expect(readme, `README must document ${name}`).toContain(`\`${name}\``);
  });
});
