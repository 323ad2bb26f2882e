import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SETTING_NAMES } from "../../core/config/settings.ts";
import { PROVIDER_IDS } from "../../core/providers/registry.ts";
import { readmeWithTable } from "../../scripts/providers-table.ts";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("README", () => {
  it("has the current provider table (run `npm run docs` after adding a provider)", async () => {
    expect(readme).toBe(await readmeWithTable(readme));
  });

  it("lists at least 40 providers", () => {
    expect(PROVIDER_IDS.length).toBeGreaterThanOrEqual(40);
  });

  it("documents every environment variable the gateway reads", () => {
    expect(SETTING_NAMES.length).toBeGreaterThan(10);
    for (const name of SETTING_NAMES) expect(readme, `README must document ${name}`).toContain(`\`${name}\``);
  });
});
