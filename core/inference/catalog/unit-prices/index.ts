import { AUDIO_PRICES } from "./audio.ts";
import { IMAGE_PRICES } from "./images.ts";
import { MODERATION_PRICES } from "./moderations.ts";
import { OCR_PRICES } from "./ocr.ts";
import { RERANK_PRICES } from "./rerank.ts";
import type { UnitPrice } from "./types.ts";

/** Every unit price, one file per family. */
export const UNIT_PRICES: readonly UnitPrice[] = [
  ...IMAGE_PRICES,
  ...AUDIO_PRICES,
  ...RERANK_PRICES,
  ...OCR_PRICES,
  ...MODERATION_PRICES,
];
