import type { BilledUnits } from "../../providers/types.ts";
import type { GuardrailVerdict } from "../../inference/guardrails/types.ts";

/** The breakdown of a logged cost (core/inference/catalog/cost.ts's Cost, less what the log keeps elsewhere). */
export interface CostDetails {
  input?: number;
  output?: number;
  /** USD per component: `input`, `cache_read`, `cache_write`, `cache_write_1h`, `output`, `output_reasoning`... */
  components?: Record<string, number>;
  source?: { name: string; version?: string; date?: string; model?: string; override?: boolean };
  /** A provider batch's discount or a service tier's factor, applied to every component. */
  factor?: { value: number; why: string };
  note?: string;
  /** Why the request has no price. */
  reason?: string;
}

/** One request log: the index fields live in Records, large bodies in Blobs. */
export interface RequestLog {
  id: string;
  /** ISO time the request arrived. */
  createdAt: string;
  traceId: string;
  spanId?: string;
  parentSpanId?: string;
  spanName?: string;
  organisationId: string;
  workspaceId?: string;
  apiKeyId?: string;
  userId?: string;
  metadata?: Record<string, string>;
  method: string;
  route: string;
  path: string;
  status: number;
  provider?: string;
  /** The saved provider (integration) that answered (core/observe/reconciliation). */
  integrationId?: string;
  requestedModel?: string;
  answeredModel?: string;
  stream?: boolean;
  /** Which config target answered, and how many retries it took (routing layer). */
  targetPath?: string;
  retryCount?: number;
  /**
   * Every upstream call of a routed request, when there was more than one or one failed (fallbacks, retries):
   * where in the config, which provider, its status and, for a failure, why.
   */
  attempts?: Array<{
    targetPath: string;
    provider: string;
    retry: number;
    status: number;
    latencyMs: number;
    error?: string;
    /** A leg of a continued stream: `broke` after content reached the client, or `continued` that answer. */
    stream?: "broke" | "continued";
    /** That leg's own tokens and cost (USD); the log's usage and cost are the sums of its legs. */
    usage?: { promptTokens: number; completionTokens: number; totalTokens: number };
    cost?: number;
  }>;
  /**
   * The stream broke after content reached the client and another target finished the answer (a fallback with
   * `on_stream_failure: "continue"`): why, which target broke, which one continued.
   */
  continuation?: {
    reason: string;
    from: { provider: string; target: string };
    by: { provider: string; target: string; model?: string };
  };
  /** x-gateway-cache-status: HIT, SEMANTIC HIT, MISS, REFRESH or DISABLED. */
  cacheStatus?: string;
  /** A cache hit (which costs 0): what the cached answer cost when made, in USD. */
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
  /** What a family billed by the unit used: images, seconds of audio, characters, rerank searches, OCR pages. */
  units?: BilledUnits;
  /** USD; absent when the request could not be priced (then `priced` is false and `costDetails.reason` says why). */
  cost?: number;
  /** False for a request with usage that no price source (nor an override) prices: filter `priced=false`. */
  priced?: boolean;
  /** How `cost` was made: its components and the price source's name and date. */
  costDetails?: CostDetails;
  /** Every guardrail that ran on the request, input and output, async ones included (core/inference/guardrails). */
  guardrails?: GuardrailVerdict[];
  error?: { message: string; code: string | null };
  /** Request headers with secrets masked. */
  headers?: Record<string, string>;
  /** Inline bodies (small) or a pointer to Blobs (`bodiesKey`). */
  requestBody?: unknown;
  responseBody?: unknown;
  bodiesKey?: string;
  /** MCP gateway requests (core/features/mcp/endpoint/request-log.ts): the JSON-RPC method, tool, arguments as configured, sizes. */
  mcp?: {
    serverId: string;
    serverSlug: string;
    /** The JSON-RPC method(s) of the HTTP request (`initialize`, `tools/call`...). */
    method: string;
    /** The tool, prompt or resource the request named. */
    name?: string;
    /** sha256 of the canonical JSON arguments (MCP_LOG_ARGUMENTS=hash), else masked or full arguments. */
    argumentsHash?: string;
    arguments?: unknown;
    resultBytes?: number;
    /** Whether the tool answered `isError: true`. */
    toolError?: boolean;
  };
  /** `gateway` for requests that went through the gateway, `custom` for POST /v1/logs inserts. */
  source: "gateway" | "custom";
}
