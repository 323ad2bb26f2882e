import { describe, expect, it } from "vitest";
import { findCatalogModel, listCatalogModels } from "../../../../core/inference/catalog/catalog.ts";
import { costOf } from "../../../../core/inference/catalog/cost.ts";
import { countChatPromptTokens, countTokens } from "../../../../core/inference/catalog/tokens.ts";

describe("catalog", () => {
  it("has at least 250 models with limits and prices from the maintained package", () => {
    const models = listCatalogModels();
    expect(models.length).toBeGreaterThanOrEqual(250);
    expect(models.filter((model) => model.prices?.input !== undefined).length).toBeGreaterThanOrEqual(250);
    const providers = new Set(models.map((model) => model.provider));
    for (const id of ["openai", "anthropic", "google", "bedrock", "groq", "mistral-ai"])
      expect(providers).toContain(id);
  });

  it("finds models by id, vendor prefix and Bedrock region prefix", () => {
    expect(findCatalogModel("openai", "gpt-4o")?.contextWindow).toBeGreaterThan(100_000);
    expect(findCatalogModel("openrouter", "anthropic/claude-3-7-sonnet-20250219")?.provider).toBe("anthropic");
    expect(findCatalogModel("bedrock", "us.anthropic.claude-3-7-sonnet-20250219-v1:0")?.provider).toBe("bedrock");
    expect(findCatalogModel("together-ai", "gpt-4o")?.provider).toBe("openai");
    expect(findCatalogModel("nobody", "no-such-model")).toBeUndefined();
  });
});

describe("cost", () => {
  it("prices prompt, cached and completion tokens at the catalog's rates", () => {
    const model = findCatalogModel("anthropic", "claude-3-7-sonnet-20250219")!;
    const { input, output, cacheRead, cacheWrite } = model.prices!;
    const cost = costOf("anthropic", "claude-3-7-sonnet-20250219", {
      prompt_tokens: 1_000_000 + 200_000 + 100_000,
      completion_tokens: 500_000,
      total_tokens: 1_800_000,
      prompt_tokens_details: { cached_tokens: 200_000, cache_creation_tokens: 100_000 },
    });
    const expected = input! + 0.2 * cacheRead! + 0.1 * cacheWrite! + 0.5 * output!;
    expect(cost.priced).toBe(true);
    expect(cost.total).toBeCloseTo(expected, 10);
  });

  it("marks unknown models as unpriced", () => {
    expect(
      costOf("openai", "no-such-model", { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }),
    ).toMatchObject({
      priced: false,
      total: 0,
    });
  });
});

describe("tokenizer", () => {
  it("counts with the real o200k encoding", async () => {
    expect(await countTokens("gpt-4o", "Hello world")).toBe(2);
    expect(await countChatPromptTokens("gpt-4o", [{ role: "user", content: "Hello world" }])).toBeGreaterThan(2);
  });
});
