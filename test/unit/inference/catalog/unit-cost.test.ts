import { describe, expect, it } from "vitest";
import { priceMetered } from "../../../../core/inference/catalog/load.ts";
import { unitCostOf } from "../../../../core/inference/catalog/unit-cost.ts";
import { familyUsageOf, tokenUsageOf } from "../../../../core/inference/gateway/family-usage.ts";
import { UploadedFile } from "../../../../core/providers/uploaded-file.ts";
import { reservationFor } from "../../../../core/inference/policies/reservation.ts";
import { silentWav } from "../../../helpers/wav.ts";

describe("families billed by the unit", () => {
  it("prices DALL-E images by quality and size, most specific key first", () => {
    const hd = unitCostOf("openai", "dall-e-3", {
      units: { images: 2 },
      priceKey: { size: "1792x1024", quality: "hd" },
    });
    expect(hd?.total).toBeCloseTo(0.24);
    const standard = unitCostOf("openai", "dall-e-3", { units: { images: 1 }, priceKey: { size: "1792x1024" } });
    expect(standard?.total).toBeCloseTo(0.08);
    expect(
      unitCostOf("openai", "dall-e-2", { units: { images: 3 }, priceKey: { size: "256x256" } })?.total,
    ).toBeCloseTo(0.048);
  });

  it("has no unit price for a model priced by the token, and then prices the tokens from the catalog", async () => {
    expect(unitCostOf("openai", "gpt-4o-mini", { units: { images: 1 } })).toBeUndefined();
    const usage = { prompt_tokens: 1000, completion_tokens: 0, total_tokens: 1000 };
    const cost = await priceMetered("openai", "text-embedding-3-small", { usage });
    expect(cost.priced).toBe(true);
    const unknown = await priceMetered("openai", "no-such-model", { units: { images: 1 } });
    expect(unknown).toEqual({ total: 0, input: 0, output: 0, priced: false });
  });

  it("meters speech by characters, transcripts by the reported duration or else the file's own", async () => {
    expect(await familyUsageOf("speech", { input: "héllo 👋" }, undefined)).toEqual({ units: { characters: 7 } });
    const file = new UploadedFile("a.wav", "audio/wav", silentWav(2.5));
    const fromFile = await familyUsageOf("transcriptions", { file, model: "whisper-1" }, { text: "" });
    expect(fromFile?.units?.seconds).toBeCloseTo(2.5, 2);
    const reported = await familyUsageOf("transcriptions", { file, model: "whisper-1" }, { duration: 9.5 });
    expect(reported?.units?.seconds).toBe(9.5);
    const cost = await priceMetered("openai", "whisper-1", fromFile!);
    expect(cost.total).toBeCloseTo((2.5 * 0.006) / 60, 8);
  });

  it("reads token usage in the shapes these families report", () => {
    expect(tokenUsageOf({ input_tokens: 50, output_tokens: 4160, total_tokens: 4210 })).toEqual({
      prompt_tokens: 50,
      completion_tokens: 4160,
      total_tokens: 4210,
    });
    expect(tokenUsageOf({ total_tokens: 30 })).toEqual({ prompt_tokens: 30, completion_tokens: 0, total_tokens: 30 });
    expect(tokenUsageOf({ nothing: 1 })).toBeUndefined();
    expect(tokenUsageOf("x")).toBeUndefined();
  });

  it("meters rerank searches and OCR pages from the answer", async () => {
    const cohere = await familyUsageOf("rerank", {}, { meta: { billed_units: { search_units: 2 } } });
    expect(cohere?.units).toEqual({ searches: 2 });
    const ocr = await familyUsageOf("ocr", {}, { pages: [{}, {}, {}], usage_info: { pages_processed: 3 } });
    expect(ocr?.units).toEqual({ pages: 3 });
  });

  it("reserves what an image request asks for before the call (cost limits)", async () => {
    const reserved = await reservationFor(
      "image_generations",
      { model: "dall-e-3", n: 2, size: "1024x1024", quality: "hd" },
      "openai",
    );
    expect(reserved.costUsd).toBeCloseTo(0.16);
  });
});
