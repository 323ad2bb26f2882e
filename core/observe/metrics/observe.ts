import type { RequestLog } from "../logs/log-record.ts";
import type { Settings } from "../../config/settings.ts";
import type { Counters } from "../../store/ports.ts";
import type { AnalyticsRecorder } from "../analytics/recorder.ts";
import type { RequestLogger } from "../logs/request-logger.ts";
import { recordLedger } from "../reconciliation/ledger.ts";
import type { GatewayMetrics } from "./prometheus.ts";
import { loadOnce } from "../../util/load-once.ts";

/** What the log observers read and set of a process's services (core/services.ts Services). */
interface ObservedServices {
  logger: RequestLogger;
  analytics: AnalyticsRecorder;
  settings: Pick<Settings, "ENABLE_PROMETHEUS">;
  metrics?: GatewayMetrics;
  stores: { counters: Counters };
}

/**
 * Everything that follows a written request log, after the response: analytics aggregates (only for logs
 * that were stored, so analytics and logs agree), Prometheus metrics (every request) and an OpenTelemetry
 * generation span per inference request (a no-op unless an OpenTelemetry SDK is registered).
 */
export function observeLogs(services: ObservedServices): void {
  services.logger.observe((log, stored) => (stored ? services.analytics.record(log) : undefined));
  if (services.settings.ENABLE_PROMETHEUS) {
    const ready = import("./prometheus.ts").then(({ PrometheusMetrics }) => {
      services.metrics = new PrometheusMetrics(services.logger.breaker);
      return services.metrics;
    });
    services.logger.observe(async (log) => (await ready).observe(log));
    metricsReady.set(services, ready);
  }
  services.logger.observe(generationSpan);
  // A saved provider's ledger, reconciled with its bill (core/observe/reconciliation).
  services.logger.observe((log, stored) =>
    stored && log.integrationId && log.cost ? recordLedger(services.stores.counters, log) : undefined,
  );
}

const metricsReady = new WeakMap<ObservedServices, Promise<GatewayMetrics>>();

/** The metrics of a process, once loaded; undefined when ENABLE_PROMETHEUS is off. */
export async function metricsOf(services: ObservedServices): Promise<GatewayMetrics | undefined> {
  return services.metrics ?? (await metricsReady.get(services));
}

/** A log the gateway wrote for an inference request (one with a provider or model): it gets a generation span. */
const isInferenceLog = (log: RequestLog): boolean =>
  log.source === "gateway" && Boolean(log.provider || log.requestedModel);

/**
 * The OpenTelemetry API (16 KB of every data-plane function's cold start) is loaded by the first inference
 * log, once per process, after its response: a Lambda's init does not pay for spans that record nothing unless an
 * OpenTelemetry SDK is registered. Later logs get the loaded function without awaiting anything.
 */
const spans = loadOnce(() => import("./generation-span.ts"));

function generationSpan(log: RequestLog): void | Promise<void> {
  if (!isInferenceLog(log)) return;
  const loaded = spans.loaded();
  if (loaded) return loaded.generationSpan(log);
  return spans.get().then((module) => module.generationSpan(log));
}
