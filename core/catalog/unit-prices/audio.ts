import type { UnitPrice } from "./types.ts";

export const AUDIO_PRICES: readonly UnitPrice[] = [
  // https://openai.com/api/pricing: Whisper $0.006 a minute; TTS $15 and TTS HD $30 per million characters.
  { providers: ["openai", "azure-openai"], model: /^whisper-1$/, perSecond: 0.006 / 60 },
  { providers: ["openai", "azure-openai"], model: /^tts-1$/, perCharacter: 15 / 1_000_000 },
  { providers: ["openai", "azure-openai"], model: /^tts-1-hd$/, perCharacter: 30 / 1_000_000 },
];
