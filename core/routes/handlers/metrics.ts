import type { HandlerMap } from "../../http/context.ts";
import { notFound } from "../../http/errors.ts";
import { metricsOf } from "../../observe/metrics/observe.ts";

/** Prometheus metrics (spec 4.8): served only when ENABLE_PROMETHEUS is set; 404 otherwise. */
export const handlers: HandlerMap = {
  async metrics(_request, ctx) {
    const metrics = await metricsOf(ctx.services);
    if (!metrics)
      throw notFound("Metrics are not enabled on this gateway (set ENABLE_PROMETHEUS).", "metrics_disabled");
    const { body, contentType } = await metrics.render();
    return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
  },
};
