import { describe, expect, it } from "vitest";
import { priceMetered } from "../../../../core/inference/catalog/load.ts";
import { familyUsageOf } from "../../../../core/inference/gateway/family-usage.ts";

/** Prices of moderations, rerank and OCR (core/inference/catalog/unit-prices/{moderations,rerank,ocr}.ts). */

describe("moderation, rerank and OCR prices", () => {
  it("OpenAI moderations are free but priced", async () => {
    const metered = await familyUsageOf("moderations", { model: "omni-moderation-latest", input: "hello there" }, {});
    expect(metered).toMatchObject({ units: {}, estimated: true });
    expect(metered!.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(await priceMetered("openai", "omni-moderation-latest", metered!)).toMatchObject({
      total: 0,
      input: 0,
      output: 0,
      priced: true,
    });
  });

  it("Mistral moderation is priced per token, reported or counted", async () => {
    const reported = await familyUsageOf(
      "moderations",
      { model: "mistral-moderation-latest", input: "x" },
      { usage: { prompt_tokens: 2_000_000, total_tokens: 2_000_000, completion_tokens: 0 } },
    );
    expect(reported!.estimated).toBeUndefined();
    const cost = await priceMetered("mistral-ai", "mistral-moderation-latest", reported!);
    expect(cost.priced).toBe(true);
    expect(cost.total).toBeCloseTo(0.2, 10);
    const counted = await familyUsageOf(
      "moderations",
      { model: "mistral-moderation-latest", input: ["a b c", "d"] },
      {},
    );
    expect(counted!.usage!.total_tokens).toBeGreaterThan(0);
    expect((await priceMetered("mistral-ai", "mistral-moderation-2411", counted!)).total).toBeGreaterThan(0);
  });

  it("rerank: Cohere per search, Bedrock per query by ARN, Voyage per token", async () => {
    expect((await priceMetered("cohere", "rerank-v3.5", { units: { searches: 3 } })).total).toBeCloseTo(0.006, 10);
    expect(
      (
        await priceMetered("bedrock", "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0", {
          units: { searches: 2 },
        })
      ).total,
    ).toBeCloseTo(0.002, 10);
    expect(
      (
        await priceMetered("bedrock", "arn:aws:bedrock:us-west-2::foundation-model/cohere.rerank-v3-5:0", {
          units: { searches: 1 },
        })
      ).total,
    ).toBeCloseTo(0.002, 10);
    const voyage = await priceMetered("voyage", "rerank-2.5", {
      units: { searches: 1 },
      usage: { prompt_tokens: 1_000_000, completion_tokens: 0, total_tokens: 1_000_000 },
    });
    expect(voyage).toMatchObject({ priced: true });
    expect(voyage.total).toBeCloseTo(0.05, 10);
    expect(
      (
        await priceMetered("voyage", "rerank-2.5-lite", {
          usage: { prompt_tokens: 1_000_000, completion_tokens: 0, total_tokens: 1_000_000 },
        })
      ).total,
    ).toBeCloseTo(0.02, 10);
  });

  it("OCR: Mistral per page", async () => {
    expect((await priceMetered("mistral-ai", "mistral-ocr-latest", { units: { pages: 250 } })).total).toBeCloseTo(
      0.25,
      10,
    );
  });
});
