import { describe, expect, it } from "vitest";
import { priceMetered } from "../../../../core/inference/catalog/load.ts";
import { familyUsageOf } from "../../../../core/inference/gateway/family-usage.ts";

describe("image prices", () => {
  it("prices gpt-image-1 from the usage its answer reports (input and output tokens)", async () => {
    // gpt-image-1's answer: usage in input/output tokens (https://platform.openai.com/docs/api-reference/images/object).
    const answer = {
      created: 1,
      data: [{ b64_json: "AAAA" }],
      usage: {
        total_tokens: 4210,
        input_tokens: 50,
        output_tokens: 4160,
        input_tokens_details: { text_tokens: 50, image_tokens: 0 },
      },
    };
    const metered = await familyUsageOf("image_generations", { prompt: "x", model: "gpt-image-1" }, answer);
    expect(metered?.usage).toEqual({ prompt_tokens: 50, completion_tokens: 4160, total_tokens: 4210 });
    const cost = await priceMetered("openai", "gpt-image-1", metered!);
    expect(cost.priced).toBe(true);
    expect(cost.total).toBeCloseTo((50 * 5 + 4160 * 40) / 1_000_000, 10);
    expect(cost.output).toBeCloseTo((4160 * 40) / 1_000_000, 10);
  });

  it("leaves gpt-image-1 unpriced when no usage came back", async () => {
    const cost = await priceMetered("azure-openai", "gpt-image-1", { units: { images: 1 } });
    expect(cost).toMatchObject({ priced: false, total: 0 });
  });

  it("prices Titan by quality and resolution class, Nova Canvas by class", async () => {
    const titan = "amazon.titan-image-generator-v1";
    const price = (model: string, size: string, quality: string) =>
      priceMetered("bedrock", model, { units: { images: 2 }, priceKey: { size, quality } });
    expect((await price(titan, "512x512", "standard")).total).toBeCloseTo(0.016);
    expect((await price(titan, "1024x1024", "premium")).total).toBeCloseTo(0.024);
    expect((await price(titan, "1024x1024", "standard")).total).toBeCloseTo(0.02);
    expect((await price("us.amazon.nova-canvas-v1:0", "2048x2048", "premium")).total).toBeCloseTo(0.16);
    expect((await price("amazon.nova-canvas-v1:0", "1024x1024", "standard")).total).toBeCloseTo(0.08);
  });

  it("prices Stability on Bedrock, Imagen and Stability AI credits per image", async () => {
    const one = { units: { images: 1 } };
    expect((await priceMetered("bedrock", "stability.stable-image-ultra-v1:1", one)).total).toBeCloseTo(0.14);
    expect((await priceMetered("bedrock", "stability.sd3-5-large-v1:0", one)).total).toBeCloseTo(0.08);
    expect((await priceMetered("vertex-ai", "imagen-4.0-fast-generate-001", one)).total).toBeCloseTo(0.02);
    expect((await priceMetered("vertex-ai", "imagen-3.0-generate-002", one)).total).toBeCloseTo(0.04);
    expect((await priceMetered("stability-ai", "sd3.5-large", one)).total).toBeCloseTo(0.065);
    expect((await priceMetered("stability-ai", "stable-image-ultra", one)).total).toBeCloseTo(0.08);
    expect((await priceMetered("stability-ai", "", one)).total).toBeCloseTo(0.03);
    const inpaint = { units: { images: 1 }, priceKey: { quality: "inpaint" } };
    expect((await priceMetered("stability-ai", "stable-image-core", inpaint)).total).toBeCloseTo(0.05);
  });
});
