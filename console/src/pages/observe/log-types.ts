/** A request log as GET /v1/logs and GET /v1/logs/:id answer it (core/observe/logs/log-record.ts). */
export interface LogEntry {
  id: string;
  createdAt: string;
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  spanName?: string;
  workspaceId?: string;
  apiKeyId?: string;
  userId?: string;
  metadata?: Record<string, string>;
  method: string;
  route: string;
  path: string;
  status: number;
  provider?: string;
  requestedModel?: string;
  answeredModel?: string;
  stream?: boolean;
  targetPath?: string;
  retryCount?: number;
  attempts?: Array<{
    targetPath: string;
    provider: string;
    retry: number;
    status: number;
    latencyMs: number;
    error?: string;
  }>;
  cacheStatus?: string;
  cacheSavedCost?: number;
  latencyMs: number;
  upstreamLatencyMs?: number;
  timeToFirstTokenMs?: number;
  usage?: {
    promptTokens: number;
    completionTokens: number;
    totalTokens: number;
    cachedTokens?: number;
    reasoningTokens?: number;
    estimated: boolean;
  };
  units?: Record<string, number>;
  cost?: number;
  /** False when no price source priced the request (`costDetails.reason` says why). */
  priced?: boolean;
  costDetails?: {
    input?: number;
    output?: number;
    components?: Record<string, number>;
    source?: { name: string; version?: string; date?: string; model?: string; override?: boolean };
    factor?: { value: number; why: string };
    note?: string;
    reason?: string;
  };
  guardrails?: Array<{
    id: string;
    slug?: string;
    name?: string;
    phase: string;
    verdict: boolean;
    deny: boolean;
    async: boolean;
    transformed: boolean;
    checks: Array<{ id: string; verdict: boolean; error?: unknown; explanation?: string; execution_time_ms?: number }>;
    execution_time_ms: number;
  }>;
  error?: { message: string; code: string | null };
  headers?: Record<string, string>;
  requestBody?: unknown;
  responseBody?: unknown;
  source: "gateway" | "custom";
}

export interface TraceSpan {
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  log: LogEntry;
  children: TraceSpan[];
}

export interface TraceAnswer {
  object: "trace";
  trace_id: string;
  spans: TraceSpan[];
  truncated: boolean;
}
