import { trace } from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach } from "vitest";

/**
 * An in-memory OpenTelemetry SDK registered for the calling test file (the gateway's spans record nothing
 * without one), emptied before each test: the spans it exports.
 */
export function inMemorySpans(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  });
  afterAll(() => {
    trace.disable();
  });
  beforeEach(() => exporter.reset());
  return exporter;
}
