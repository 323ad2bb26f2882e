import { calcPrice } from "@pydantic/genai-prices";
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
  const perToken = (model: string, provider: string, key: string) => {
    const price = calcPrice({}, model, { providerId: provider })!.model_price[key];
    return (typeof price === "number" ? price : price!.base) / 1_000_000;
  };

  it("prices cached input at the cache-read rate and each cache write at its TTL's rate", () => {
    const cost = costOf("anthropic", "claude-sonnet-4-5", {
      prompt_tokens: 10_000,
      completion_tokens: 1_000,
      total_tokens: 11_000,
      prompt_tokens_details: { cached_tokens: 4_000, cache_creation_tokens: 3_000, cache_creation_1h_tokens: 1_000 },
    });
    const rate = (key: string) => perToken("claude-sonnet-4-5", "anthropic", key);
    expect(cost.components?.input).toBeCloseTo(3_000 * rate("input_mtok"), 12);
    expect(cost.components?.cache_read).toBeCloseTo(4_000 * rate("cache_read_mtok"), 12);
    expect(cost.components?.cache_write).toBeCloseTo(2_000 * rate("cache_write_mtok"), 12);
    expect(cost.components?.cache_write_1h).toBeCloseTo(1_000 * rate("cache_write_1h_mtok"), 12);
    expect(rate("cache_read_mtok")).toBeLessThan(rate("input_mtok"));
    expect(cost.source).toMatchObject({ name: "@pydantic/genai-prices", version: "0.1.8", date: "2026-09-23" });
  });

  it("prices reasoning tokens at the model's reasoning rate, else as output", () => {
    const usage = { prompt_tokens: 100, completion_tokens: 1_000, total_tokens: 1_100 };
    const thinking = { ...usage, completion_tokens_details: { reasoning_tokens: 800 } };
    const sonar = costOf("perplexity-ai", "sonar-deep-research", thinking);
    const rate = (key: string) => perToken("sonar-deep-research", "perplexity", key);
    expect(sonar.components?.output_reasoning).toBeCloseTo(800 * rate("output_reasoning_mtok"), 12);
    expect(sonar.components?.output).toBeCloseTo(200 * rate("output_mtok"), 12);
    const gpt = costOf("openai", "gpt-5.1", thinking);
    expect(gpt.total).toBeCloseTo(costOf("openai", "gpt-5.1", usage).total, 12);
    expect(gpt.components?.output_reasoning).toBeCloseTo(800 * perToken("gpt-5.1", "openai", "output_mtok"), 12);
  });

  it("applies the long-context tier over 200k input tokens", () => {
    const short = costOf("google", "gemini-3-pro-preview", {
      prompt_tokens: 200_000,
      completion_tokens: 0,
      total_tokens: 200_000,
    });
    const long = costOf("google", "gemini-3-pro-preview", {
      prompt_tokens: 200_001,
      completion_tokens: 0,
      total_tokens: 200_001,
    });
    expect(long.total / 200_001).toBeGreaterThan((short.total / 200_000) * 1.5);
  });

  it("lets an admin's override win, field by field", () => {
    const usage = { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 };
    const cost = costOf("openai", "gpt-5.1", usage, { input: 1 });
    expect(cost.components?.input).toBeCloseTo(1, 10);
    expect(cost.components?.output).toBeCloseTo(1_000_000 * perToken("gpt-5.1", "openai", "output_mtok"), 10);
    expect(cost.source?.override).toBe(true);
    expect(costOf("custom", "in-house-model", usage, { input: 2, output: 3 })).toMatchObject({
      priced: true,
      total: 5,
      source: { name: "model-pricing override" },
    });
  });

  it("falls back to models.dev's prices for a model genai-prices does not list", () => {
    const cost = costOf("deepinfra", "meta-llama/Llama-3.3-70B-Instruct", {
      prompt_tokens: 1_000,
      completion_tokens: 100,
      total_tokens: 1_100,
    });
    expect(cost.priced).toBe(true);
    expect(cost.source?.name).toMatch(/models\.dev/);
  });

  it("halves a flex answer and a native batch line, and notes a tier without a known rate", () => {
    const usage = { prompt_tokens: 10_000, completion_tokens: 1_000, total_tokens: 11_000 };
    const standard = costOf("openai", "gpt-5.1", usage).total;
    expect(costOf("openai", "gpt-5.1", usage, undefined, { serviceTier: "flex" }).total).toBeCloseTo(standard / 2, 12);
    expect(costOf("openai", "gpt-5.1", usage, undefined, { batchFactor: 0.5 }).total).toBeCloseTo(standard / 2, 12);
    const priority = costOf("openai", "gpt-5.1", usage, undefined, { serviceTier: "priority" });
    expect(priority.total).toBeCloseTo(standard, 12);
    expect(priority.note).toMatch(/priority/);
  });

  it("marks unknown models as unpriced and says why", () => {
    expect(
      costOf("openai", "no-such-model", { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }),
    ).toMatchObject({
      priced: false,
      total: 0,
      reason: expect.stringMatching(/no-such-model/),
    });
  });
});

describe("tokenizer", () => {
  it("counts with the real o200k encoding", async () => {
    expect(await countTokens("gpt-4o", "Hello world")).toBe(2);
    expect(await countChatPromptTokens("gpt-4o", [{ role: "user", content: "Hello world" }])).toBeGreaterThan(2);
  });
});
