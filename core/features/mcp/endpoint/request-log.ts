import type { Principal } from "../../../auth/principal.ts";
import { sha256Hex } from "../../../util/ids.ts";
import type { GatewayRequestHeaders } from "../../../http/gateway-headers.ts";
import type { RequestLog } from "../../../observe/logs/log-record.ts";
import type { Services } from "../../../services.ts";
import type { McpServer } from "../records.ts";
import { otlpLogExporter } from "./otlp-exporter.ts";

/** What one MCP request did, for its log. */
export interface McpRequestRecord {
  /** The JSON-RPC method(s) of the request, comma-separated for a batch; `-` when the body was not JSON-RPC. */
  method: string;
  name?: string;
  arguments?: unknown;
  resultBytes?: number;
  toolError?: boolean;
  status: number;
  error?: { message: string; code: string | null };
}

export interface McpLogContext {
  traceId: string;
  /** The request's gateway headers: metadata and span ids go into the log as on other routes. */
  gateway?: Pick<GatewayRequestHeaders, "metadata" | "spanId" | "parentSpanId" | "spanName">;
  /** performance.now() when the request arrived. */
  startedAt: number;
  httpMethod: string;
  path: string;
  route: string;
}

/**
 * Writes the one log of an MCP request (provider `mcp`, model = the server's slug), visible through
 * `GET /v1/logs` like any other, and hands it to the OTLP exporter when one is configured. Arguments are kept as
 * MCP_LOG_ARGUMENTS says: a hash by default (they may hold secrets), masked, or in full. Never throws.
 */
export function writeMcpLog(
  services: Services,
  principal: Principal,
  server: Pick<McpServer, "id" | "slug" | "workspaceId">,
  record: McpRequestRecord,
  context: McpLogContext,
): Promise<void> {
  const log: RequestLog = {
    id: services.logger.newLogId(),
    createdAt: new Date(performance.timeOrigin + context.startedAt).toISOString(),
    traceId: context.traceId,
    spanId: context.gateway?.spanId,
    parentSpanId: context.gateway?.parentSpanId,
    spanName: context.gateway?.spanName,
    metadata: context.gateway?.metadata,
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId ?? server.workspaceId,
    apiKeyId: principal.keyId,
    userId: principal.userId,
    method: context.httpMethod,
    route: context.route,
    path: context.path,
    status: record.status,
    provider: "mcp",
    requestedModel: server.slug,
    answeredModel: server.slug,
    latencyMs: Math.round((performance.now() - context.startedAt) * 10) / 10,
    error: record.error,
    mcp: {
      serverId: server.id,
      serverSlug: server.slug,
      method: record.method,
      ...(record.name !== undefined ? { name: loggedName(record) } : {}),
      ...argumentsForLog(record.arguments, services.settings.MCP_LOG_ARGUMENTS),
      ...(record.resultBytes !== undefined ? { resultBytes: record.resultBytes } : {}),
      ...(record.toolError !== undefined ? { toolError: record.toolError } : {}),
    },
    source: "gateway",
  };
  const exporter = otlpLogExporter(services.settings);
  exporter?.enqueue(log);
  const written = services.logger.write(log).then(
    () => undefined,
    (error) => console.error(`[${context.traceId}] MCP log write failed`, error),
  );
  // A Lambda container may freeze once the invocation's waitUntil work is done: post the batch before that.
  if (exporter && services.settings.GATEWAY_PLATFORM === "aws")
    return Promise.all([written, exporter.flush()]).then(() => {});
  return written;
}

/** The arguments as the log keeps them. */
export function argumentsForLog(
  args: unknown,
  mode: "hash" | "masked" | "full",
): { argumentsHash?: string; arguments?: unknown } {
  if (args === undefined) return {};
  if (mode === "full") return { arguments: args };
  if (mode === "masked") return { arguments: masked(args) };
  return { argumentsHash: sha256Hex(canonicalJson(args)) };
}

/** The same structure with every leaf value replaced (keys and array lengths stay). */
function masked(value: unknown, depth = 0): unknown {
  if (depth > 20) return "***";
  if (Array.isArray(value)) return value.map((item) => masked(item, depth + 1));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, masked(item, depth + 1)]));
  }
  return "***";
}

/** JSON with object keys sorted, so equal arguments hash alike whatever their order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * The name as logged: a task id (the name of `tasks/*` requests) is a bearer handle of 256 bits, so the log keeps
 * a hash of it, enough to tell one task's polls from another's without handing the id to every log reader.
 */
function loggedName(record: McpRequestRecord): string | undefined {
  if (record.name === undefined || !record.method.startsWith("tasks/")) return record.name;
  return `sha256:${sha256Hex(record.name).slice(0, 16)}`;
}
