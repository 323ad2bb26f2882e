import type { ProviderTarget } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";

/**
 * A saved integration's model rules (ProviderTarget.modelRules): refuses (403, so a fallback moves on) a model the integration does not
 * enable, and adds the model's custom headers to what is sent to the provider. Applied before the cache is
 * looked up (core/gateway/inference.ts, passthrough.ts), so a model disabled after its answer was cached is
 * refused, never answered from the cache.
 */
export function applyModelRules(target: ProviderTarget, model: unknown): ProviderTarget {
  const rules = target.modelRules;
  if (!rules) return target;
  const entry = typeof model === "string" ? rules.models[model] : undefined;
  if (entry ? !entry.enabled : !rules.allowAll) {
    throw new UpstreamError(403, `The model '${String(model)}' is not enabled for this saved provider.`, {
      type: "permission_error",
      code: "model_not_allowed",
      param: "model",
    });
  }
  if (!entry?.headers || Object.keys(entry.headers).length === 0) return target;
  return { ...target, forwardHeaders: { ...entry.headers, ...target.forwardHeaders } };
}
