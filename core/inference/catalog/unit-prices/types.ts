/**
 * A price per unit (USD) for one provider's models, for the families billed by the unit (images, audio, rerank,
 * OCR). Facts from each provider's pricing page, named in a comment beside the row.
 */
export interface UnitPrice {
  /** Our provider ids the row applies to (a model served by several providers at one price lists them all). */
  providers: readonly string[];
  /** The model id, or a pattern for a family of ids (dated snapshots, Bedrock ARNs and regional prefixes). */
  model: string | RegExp;
  /**
   * USD per image: one number, or by `quality:size`, then `size`, then `quality`, then `default` (the first key
   * present wins, so `hd:1024x1792` beats `1024x1792`).
   */
  perImage?: number | Readonly<Record<string, number>>;
  /** USD per second of input (transcription) or output audio. */
  perSecond?: number;
  /** USD per character of text turned into speech. */
  perCharacter?: number;
  /** USD per rerank search. */
  perSearch?: number;
  /** USD per OCR page. */
  perPage?: number;
  /**
   * USD per million tokens of the reported (or counted) usage, for token-billed models the catalog does not price
   * (gpt-image, rerankers and moderation models sold by the token), added to any per-unit price. A row with no
   * price at all is a free model (OpenAI's moderations).
   */
  perMillionTokens?: { input: number; output?: number };
}
