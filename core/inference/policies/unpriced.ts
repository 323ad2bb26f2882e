import { hasPrice } from "../catalog/load.ts";
import type { PriceOverride } from "../catalog/price-override.ts";
import { UpstreamError } from "../../providers/types.ts";
import type { CompiledPolicy } from "./model.ts";

/**
 * A model without a price never passes as $0 under a cost limit: a target whose model no source (nor an
 * override) prices is refused when a cost limit that applies to the request says `unpriced: "deny"` (the
 * default). The refusal is a failed target (403), so a fallback moves on to its next target; when none is left
 * the client gets it, in OpenAI's error shape, naming the model and the policy.
 */
export async function refuseUnpriced(
  policies: readonly CompiledPolicy[],
  provider: string,
  model: string,
  override: PriceOverride | undefined,
): Promise<void> {
  if (await hasPrice(provider, model, override)) return;
  const policy = policies[0]!.policy;
  const name = policy.name ? `'${policy.name}' (${policy.id})` : `'${policy.id}'`;
  throw new UpstreamError(
    403,
    `The model '${model}' of provider '${provider}' has no known price, and the cost usage limit ${name} refuses ` +
      `models without one (its unpriced is "deny"). Save a model price for it (/v1/model-pricing), or set the ` +
      `policy's unpriced to "allow" or "estimate".`,
    { type: "invalid_request_error", code: "unpriced_model_under_cost_limit", param: "model" },
  );
}
