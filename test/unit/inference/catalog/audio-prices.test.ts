import { describe, expect, it } from "vitest";
import { unitCostOf, unitPriceOf } from "../../../../core/inference/catalog/unit-cost.ts";

describe("audio unit prices", () => {
  it("prices transcription per second of audio", () => {
    expect(unitCostOf("groq", "whisper-large-v3-turbo", { units: { seconds: 3600 } })?.total).toBeCloseTo(0.04, 10);
    expect(unitCostOf("groq", "whisper-large-v3", { units: { seconds: 3600 } })?.total).toBeCloseTo(0.111, 10);
    expect(unitCostOf("deepgram", "nova-3", { units: { seconds: 60 } })?.total).toBeCloseTo(0.0043, 10);
    expect(unitCostOf("deepgram", "nova-3-multilingual", { units: { seconds: 60 } })?.total).toBeCloseTo(0.0052, 10);
    expect(unitCostOf("elevenlabs", "scribe_v1", { units: { seconds: 3600 } })?.total).toBeCloseTo(0.4, 10);
    expect(unitCostOf("openai", "gpt-4o-mini-transcribe", { units: { seconds: 60 } })?.total).toBeCloseTo(0.003, 10);
    expect(unitCostOf("azure-openai", "whisper-1", { units: { seconds: 60 } })?.total).toBeCloseTo(0.006, 10);
  });

  it("prices speech per character", () => {
    expect(unitCostOf("deepgram", "aura-2-thalia-en", { units: { characters: 1000 } })?.total).toBeCloseTo(0.03, 10);
    expect(unitCostOf("deepgram", "aura-asteria-en", { units: { characters: 1000 } })?.total).toBeCloseTo(0.015, 10);
    expect(unitCostOf("elevenlabs", "eleven_flash_v2_5", { units: { characters: 1000 } })?.total).toBeCloseTo(0.05, 10);
    expect(unitCostOf("elevenlabs", "eleven_multilingual_v2", { units: { characters: 1000 } })?.total).toBeCloseTo(
      0.1,
      10,
    );
    expect(unitCostOf("openai", "tts-1-hd", { units: { characters: 1_000_000 } })?.total).toBeCloseTo(30, 10);
  });

  it("has no row for another provider's model of the same name", () => {
    expect(unitPriceOf("together-ai", "whisper-large-v3")).toBeUndefined();
    expect(unitPriceOf("deepgram", "whisper-1")).toBeUndefined();
  });
});
