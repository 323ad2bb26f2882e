import * as z from "zod";
import type { Principal } from "../../auth/principal.ts";
import { type Resource, ResourceStore } from "../../control/resource-store.ts";
import type { RequestLog } from "../logs/log-record.ts";
import type { LogFilter } from "../logs/request-logger.ts";
import type { Records } from "../../store/ports.ts";

/**
 * Log exports: ResourceStore kind LOG_EXPORT (`lexp_...` ids). A draft is created with filters (as the logs
 * list) and the fields wanted (`requested_data`), started (a job on the logical queue `exports`), written by
 * the worker as JSONL to Blobs (`exports/<org>/<id>.jsonl`) and downloaded through a signed URL.
 * States: draft -> queued -> running -> success | failed; draft, queued or running -> cancelled.
 */
export type ExportStatus = "draft" | "queued" | "running" | "success" | "failed" | "cancelled";

export interface LogExport extends Resource {
  description: string | null;
  filters: ExportFilters;
  requestedData: string[];
  status: ExportStatus;
  createdBy: { keyId?: string; userId?: string; keySubType?: string };
  lineCount?: number;
  blobKey?: string;
  error?: string | null;
  queuedAt?: number;
  startedAt?: number;
  finishedAt?: number;
}

export const LOG_EXPORT_KIND = "LOG_EXPORT";
export const logExportStore = (records: Records) => new ResourceStore<LogExport>(records, LOG_EXPORT_KIND, "lexp");

/** The fields an export line may carry (snake_case of the log's fields; `request`/`response` are the bodies). */
export const EXPORT_FIELDS: Record<string, (log: RequestLog) => unknown> = {
  id: (log) => log.id,
  created_at: (log) => log.createdAt,
  trace_id: (log) => log.traceId,
  span_id: (log) => log.spanId,
  parent_span_id: (log) => log.parentSpanId,
  span_name: (log) => log.spanName,
  organisation_id: (log) => log.organisationId,
  workspace_id: (log) => log.workspaceId,
  api_key_id: (log) => log.apiKeyId,
  user_id: (log) => log.userId,
  metadata: (log) => log.metadata,
  method: (log) => log.method,
  route: (log) => log.route,
  path: (log) => log.path,
  status: (log) => log.status,
  provider: (log) => log.provider,
  requested_model: (log) => log.requestedModel,
  answered_model: (log) => log.answeredModel,
  stream: (log) => log.stream,
  target_path: (log) => log.targetPath,
  retry_count: (log) => log.retryCount,
  attempts: (log) => log.attempts,
  cache_status: (log) => log.cacheStatus,
  latency_ms: (log) => log.latencyMs,
  upstream_latency_ms: (log) => log.upstreamLatencyMs,
  time_to_first_token_ms: (log) => log.timeToFirstTokenMs,
  usage: (log) => log.usage,
  prompt_tokens: (log) => log.usage?.promptTokens,
  completion_tokens: (log) => log.usage?.completionTokens,
  total_tokens: (log) => log.usage?.totalTokens,
  units: (log) => log.units,
  cost: (log) => log.cost,
  error: (log) => log.error,
  headers: (log) => log.headers,
  request: (log) => log.requestBody,
  response: (log) => log.responseBody,
  source: (log) => log.source,
};

const BODY_FIELDS = new Set(["request", "response"]);
export const needsBodies = (fields: string[]) => fields.some((field) => BODY_FIELDS.has(field));

const time = z.union([z.iso.datetime({ offset: true }), z.iso.date()]);

export const exportFiltersSchema = z.strictObject({
  from: time.optional(),
  to: time.optional(),
  time_of_generation_min: time.optional(),
  time_of_generation_max: time.optional(),
  status: z.number().int().min(100).max(599).optional(),
  provider: z.string().max(200).optional(),
  model: z.string().max(200).optional(),
  trace_id: z.string().max(256).optional(),
  metadata_key: z.string().max(64).optional(),
  metadata_value: z.string().max(512).optional(),
  min_cost: z.number().min(0).optional(),
  max_cost: z.number().min(0).optional(),
  /** false: the requests no price source could price. */
  priced: z.boolean().optional(),
  api_key_id: z.string().max(200).optional(),
  user_id: z.string().max(200).optional(),
});
export type ExportFilters = z.infer<typeof exportFiltersSchema>;

const requestedData = z
  .array(z.string())
  .min(1)
  .max(Object.keys(EXPORT_FIELDS).length)
  .superRefine((fields, ctx) => {
    for (const field of fields) {
      if (!(field in EXPORT_FIELDS))
        ctx.addIssue({
          code: "custom",
          message: `unknown field '${field}'; known: ${Object.keys(EXPORT_FIELDS).join(", ")}`,
        });
    }
  })
  .transform((fields) => [...new Set(fields)]);

export const createExportSchema = z.strictObject({
  workspace_id: z.string().optional(),
  description: z.string().max(1000).nullable().optional(),
  filters: exportFiltersSchema.default({}),
  requested_data: requestedData,
});

export const updateExportSchema = z
  .strictObject({
    description: z.string().max(1000).nullable().optional(),
    filters: exportFiltersSchema.optional(),
    requested_data: requestedData.optional(),
  })
  .refine((body) => Object.keys(body).length > 0, "nothing to update");

/** The logs-list filter an export's filters stand for (in the export's workspace). */
export function toLogFilter(logExport: LogExport): LogFilter {
  const filters = logExport.filters;
  const from = filters.time_of_generation_min ?? filters.from;
  const to = filters.time_of_generation_max ?? filters.to;
  return {
    from: from ? new Date(from) : undefined,
    to: to ? new Date(to) : undefined,
    workspaceId: logExport.workspaceId,
    status: filters.status,
    provider: filters.provider,
    model: filters.model,
    traceId: filters.trace_id,
    metadataKey: filters.metadata_key,
    metadataValue: filters.metadata_value,
    minCost: filters.min_cost,
    maxCost: filters.max_cost,
    priced: filters.priced,
    apiKeyId: filters.api_key_id,
    userId: filters.user_id,
  };
}

/** One JSONL line: only the fields asked for (and allowed). */
export function exportLine(log: RequestLog, fields: string[]): string {
  const line: Record<string, unknown> = {};
  for (const field of fields) line[field] = EXPORT_FIELDS[field]!(log) ?? null;
  return JSON.stringify(line);
}

const deniedList = (value: unknown): string[] | undefined =>
  Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === "string") : undefined;

/**
 * The export fields denied for a workspace: the workspace's `log_export_denied_fields` when it sets one
 * (an override, as the spec's "workspace override"), else the organisation setting `log_export_denied_fields`
 * (`ORG#<id>`.settings). Exports over every workspace get the organisation's list.
 */
export async function deniedFields(
  records: Records,
  organisationId: string,
  workspaceId: string | undefined,
): Promise<{ fields: string[]; source: "organisation" | "workspace" | "none" }> {
  if (workspaceId) {
    const workspace = await new ResourceStore(records, "WORKSPACE", "ws").get(organisationId, workspaceId);
    const override =
      deniedList(workspace?.log_export_denied_fields) ??
      deniedList((workspace?.settings as Record<string, unknown> | undefined)?.log_export_denied_fields);
    if (override) return { fields: override, source: "workspace" };
  }
  const organisation = await records.get(`ORG#${organisationId}`, "ORG");
  const fields = deniedList((organisation?.settings as Record<string, unknown> | undefined)?.log_export_denied_fields);
  return fields ? { fields, source: "organisation" } : { fields: [], source: "none" };
}

/** Spec 5.5: a user API key sees only the exports it created; workspace keys only their workspace's. */
export function canSeeExport(principal: Principal, logExport: LogExport): boolean {
  if (logExport.organisationId !== principal.organisationId) return false;
  if (principal.keyType !== "organisation" && principal.workspaceId && logExport.workspaceId !== principal.workspaceId)
    return false;
  if (principal.keySubType === "user") {
    if (principal.userId) return logExport.createdBy.userId === principal.userId;
    return logExport.createdBy.keyId === principal.keyId;
  }
  return true;
}

export function presentExport(logExport: LogExport) {
  return {
    id: logExport.id,
    object: "log_export",
    status: logExport.status,
    description: logExport.description,
    workspace_id: logExport.workspaceId ?? null,
    filters: logExport.filters,
    requested_data: logExport.requestedData,
    total_lines: logExport.lineCount ?? null,
    error: logExport.error ?? null,
    created_by: logExport.createdBy.userId ?? logExport.createdBy.keyId ?? null,
    created_at: logExport.createdAt,
    updated_at: logExport.updatedAt,
    started_at: logExport.startedAt ?? null,
    finished_at: logExport.finishedAt ?? null,
  };
}
