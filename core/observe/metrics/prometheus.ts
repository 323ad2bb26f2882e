import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { CircuitBreaker } from "../logs/circuit-breaker.ts";
import type { RequestLog } from "../logs/log-record.ts";

/** What this module provides (loaded only when ENABLE_PROMETHEUS is set: core/observe/metrics/observe.ts). */
export interface GatewayMetrics {
  observe(log: RequestLog): void;
  /** The Prometheus text exposition and its content type. */
  render(): Promise<{ body: string; contentType: string }>;
}

/**
 * Prometheus metrics of this process (GET /metrics when ENABLE_PROMETHEUS is set), updated as request logs
 * are written (after the response). Labels stay low-cardinality: route pattern, provider, model, status.
 */
export class PrometheusMetrics implements GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<string>;
  private readonly latency: Histogram<string>;
  private readonly tokens: Counter<string>;
  private readonly cost: Counter<string>;
  private readonly errors: Counter<string>;
  private readonly cache: Counter<string>;

  constructor(breaker: CircuitBreaker) {
    const registers = [this.registry];
    const labelNames = ["route", "provider", "model", "status"];
    this.requests = new Counter({
      name: "gateway_requests_total",
      help: "Requests handled (authenticated), by route, provider, model and status.",
      labelNames,
      registers,
    });
    this.latency = new Histogram({
      name: "gateway_request_duration_seconds",
      help: "Request duration from arrival to the end of the answer.",
      labelNames,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    });
    this.tokens = new Counter({
      name: "gateway_tokens_total",
      help: "Tokens, by provider, model and type (prompt, completion).",
      labelNames: ["provider", "model", "type"],
      registers,
    });
    this.cost = new Counter({
      name: "gateway_cost_usd_total",
      help: "Cost in US dollars, by provider and model.",
      labelNames: ["provider", "model"],
      registers,
    });
    this.errors = new Counter({
      name: "gateway_errors_total",
      help: "Requests answered with an error, by route, provider and status.",
      labelNames: ["route", "provider", "status"],
      registers,
    });
    this.cache = new Counter({
      name: "gateway_cache_total",
      help: "Cache lookups, by status (HIT, MISS, ...).",
      labelNames: ["status"],
      registers,
    });
    new Gauge({
      name: "gateway_log_store_dropped_writes",
      help: "Request-log writes skipped or failed since start (log-store circuit breaker).",
      registers,
      collect() {
        this.set(breaker.dropped);
      },
    });
    new Gauge({
      name: "gateway_log_store_circuit_open",
      help: "1 while the log-store circuit is open (log writes skipped).",
      registers,
      collect() {
        this.set(breaker.open ? 1 : 0);
      },
    });
  }

  observe(log: RequestLog): void {
    const provider = log.provider ?? "";
    const model = log.requestedModel ?? log.answeredModel ?? "";
    const labels = { route: log.route, provider, model, status: String(log.status) };
    this.requests.inc(labels);
    this.latency.observe(labels, log.latencyMs / 1000);
    if (log.usage) {
      if (log.usage.promptTokens) this.tokens.inc({ provider, model, type: "prompt" }, log.usage.promptTokens);
      if (log.usage.completionTokens)
        this.tokens.inc({ provider, model, type: "completion" }, log.usage.completionTokens);
    }
    if (log.cost) this.cost.inc({ provider, model }, log.cost);
    if (log.status >= 400 || log.error) this.errors.inc({ route: log.route, provider, status: String(log.status) });
    if (log.cacheStatus) this.cache.inc({ status: log.cacheStatus });
  }

  async render(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
