import { singleTargetOf } from "../../inference/gateway/deferred-request.ts";
import { gatewayHeadersOf } from "../../inference/gateway/plan.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest } from "../../http/errors.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { requireRouting } from "../../inference/routing/source.ts";
import { nativeBatchApiFor } from "./native/registry.ts";
import type { BatchEndpoint, BatchMode } from "./types.ts";

export const BATCH_MODE_PARAM = "x-gateway-batch-mode";

/**
 * How a new batch runs. Asked for by the request header `x-gateway-batch-mode` (or `x-portkey-batch-mode`), else by
 * the config's root `batch_mode`; by default `native` when the routing names one target whose provider has a batch
 * API that supports the endpoint, else `gateway`. Native asked where it is impossible answers 400 saying why.
 * Routing errors (no provider, a bad config) answer as on inference routes.
 */
export async function chooseBatchMode(
  request: Request,
  ctx: RequestContext,
  endpoint: BatchEndpoint,
): Promise<{ mode: BatchMode; provider?: string }> {
  const gateway = gatewayHeadersOf(request, ctx);
  const header = gateway.values.get("batch-mode")?.trim().toLowerCase();
  if (header !== undefined && header !== "native" && header !== "gateway") {
    throw badRequest(`${BATCH_MODE_PARAM} must be 'native' or 'gateway'.`, BATCH_MODE_PARAM, "invalid_header");
  }
  const config = await requireRouting(gateway, ctx);
  const asked = (header as BatchMode | undefined) ?? config.batchMode;
  if (asked === "gateway") return { mode: "gateway" };

  let target: ProviderTarget | undefined;
  let why: string | undefined;
  if (config.kind !== "leaf") why = `its config has a ${config.mode} strategy over several targets`;
  else {
    target = await singleTargetOf(request, ctx);
    if (!target) why = "its routing names no single provider";
  }
  if (target) {
    const api = await nativeBatchApiFor(target.provider);
    if (!api) why = `provider '${target.provider}' has no batch API the gateway supports`;
    else if (!api.supports(target, endpoint))
      why = `provider '${target.provider}' cannot run ${endpoint} in its batch API`;
    else return { mode: "native", provider: target.provider };
  }
  if (asked === "native") {
    throw badRequest(
      `This batch cannot run natively: ${why}. Leave out batch_mode (or ask for 'gateway') to have the gateway run it.`,
      header ? BATCH_MODE_PARAM : "x-gateway-config.batch_mode",
      "batch_mode_unavailable",
    );
  }
  return { mode: "gateway" };
}
