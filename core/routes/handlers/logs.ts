import { workspaceScope } from "../../auth/scopes.ts";
import type { HandlerMap } from "../../http/context.ts";
import { badRequest, notFound, serviceUnavailable } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";
import type { RequestLog } from "../../logs/log-record.ts";
import { customLogRequest, listLogsQuery } from "../../logs/schemas.ts";
import { exportHandlers } from "../../exports/handlers.ts";

/** Request logs: list with filters, one log with its bodies, custom log inserts, and log exports (core/exports). */
export const handlers: HandlerMap = {
  ...exportHandlers,
  async listLogs(request, ctx) {
    const principal = ctx.principal!;
    const query = validate(listLogsQuery, Object.fromEntries(new URL(request.url).searchParams));
    const workspaceId = workspaceScope(principal, query.workspace_id);
    let page: Awaited<ReturnType<typeof ctx.services.logger.list>>;
    try {
      page = await ctx.services.logger.list(
        principal.organisationId,
        {
          from: query.from ? new Date(query.from) : undefined,
          to: query.to ? new Date(query.to) : undefined,
          workspaceId,
          status: query.status,
          provider: query.provider,
          model: query.model,
          traceId: query.trace_id,
          metadataKey: query.metadata_key,
          metadataValue: query.metadata_value,
          minCost: query.min_cost,
          maxCost: query.max_cost,
          apiKeyId: query.api_key_id,
          userId: query.user_id,
        },
        query.limit,
        query.cursor ?? query.after,
      );
    } catch (error) {
      if (error instanceof RangeError) throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
      throw error;
    }
    // A page may hold fewer than `limit` logs, none even, and still have more: each search reads a bounded
    // share of the index (core/logs/log-search.ts). Its logs come without bodies.
    return json({
      object: "list",
      data: page.items,
      has_more: page.cursor !== undefined,
      next_cursor: page.cursor ?? null,
    });
  },

  /**
   * GET /v1/logs/traces/:traceId: the trace's logs as a tree of spans (parent span id -> children). Searches
   * read a bounded share of the index per call: a few are made before the trace is answered as truncated.
   */
  async getTrace(_request, ctx) {
    const principal = ctx.principal!;
    const traceId = ctx.params.traceId!;
    const filter = { traceId, workspaceId: workspaceScope(principal, undefined) };
    const spans: RequestLog[] = [];
    let cursor: string | undefined;
    for (let call = 0; call < MAX_TRACE_CALLS && spans.length < MAX_TRACE_SPANS; call++) {
      const page = await ctx.services.logger.list(
        principal.organisationId,
        filter,
        MAX_TRACE_SPANS - spans.length,
        cursor,
      );
      spans.push(...page.items);
      cursor = page.cursor;
      if (!cursor) break;
    }
    if (spans.length === 0 && !cursor) throw notFound(`No logs with trace id '${traceId}'.`);
    return json({
      object: "trace",
      trace_id: traceId,
      spans: spanTree(spans),
      truncated: cursor !== undefined,
    });
  },

  async getLog(_request, ctx) {
    const principal = ctx.principal!;
    const log = await ctx.services.logger.get(ctx.params.id!);
    const visible = log && log.organisationId === principal.organisationId && canSeeWorkspace(principal, log);
    if (!visible) throw notFound(`No log with id '${ctx.params.id}'.`);
    const { bodiesKey, ...rest } = log;
    return json(rest);
  },

  async createLog(request, ctx) {
    const principal = ctx.principal!;
    const body = await readBody(request, customLogRequest, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const workspaceId = workspaceScope(principal, body.workspace_id);
    const requestBody = body.request.body as Record<string, any> | undefined;
    const responseBody = body.response?.body as Record<string, any> | undefined;
    const usage = responseBody?.usage;
    const log: RequestLog = {
      id: ctx.services.logger.newLogId(),
      createdAt: new Date().toISOString(),
      traceId: body.trace_id ?? ctx.traceId,
      spanId: body.span_id,
      organisationId: principal.organisationId,
      workspaceId,
      apiKeyId: principal.keyId,
      userId: principal.userId,
      metadata: body.metadata,
      method: body.request.method ?? "POST",
      route: "custom",
      path: body.request.url ?? "",
      status: body.response?.status ?? 200,
      provider: body.request.provider,
      requestedModel: typeof requestBody?.model === "string" ? requestBody.model : undefined,
      answeredModel: typeof responseBody?.model === "string" ? responseBody.model : undefined,
      latencyMs: body.response?.response_time ?? 0,
      usage:
        usage && typeof usage.prompt_tokens === "number"
          ? {
              promptTokens: usage.prompt_tokens,
              completionTokens: usage.completion_tokens ?? 0,
              totalTokens: usage.total_tokens ?? usage.prompt_tokens + (usage.completion_tokens ?? 0),
              estimated: false,
            }
          : undefined,
      requestBody,
      responseBody,
      source: "custom",
    };
    if (!(await ctx.services.logger.write(log))) {
      throw serviceUnavailable("The log store is unavailable; the log was not saved.");
    }
    return json({ id: log.id, object: "log", created_at: log.createdAt }, { status: 201 });
  },
};

const MAX_TRACE_SPANS = 1000;
/** Searches one trace request makes at most (each a bounded read of the index, log-search.ts). */
const MAX_TRACE_CALLS = 4;

interface SpanNode {
  span_id: string | null;
  parent_span_id: string | null;
  span_name: string | null;
  log: Omit<RequestLog, "requestBody" | "responseBody" | "bodiesKey">;
  children: SpanNode[];
}

/** Oldest first; a span whose parent is not among the logs becomes a root. */
function spanTree(logs: RequestLog[]): SpanNode[] {
  const nodes = [...logs].reverse().map((log): SpanNode => {
    const { requestBody, responseBody, bodiesKey, ...summary } = log;
    return {
      span_id: log.spanId ?? null,
      parent_span_id: log.parentSpanId ?? null,
      span_name: log.spanName ?? null,
      log: summary,
      children: [],
    };
  });
  const bySpan = new Map(nodes.filter((node) => node.span_id).map((node) => [node.span_id!, node]));
  const roots: SpanNode[] = [];
  for (const node of nodes) {
    const parent = node.parent_span_id ? bySpan.get(node.parent_span_id) : undefined;
    if (parent && parent !== node) parent.children.push(node);
    else roots.push(node);
  }
  return roots;
}

function canSeeWorkspace(principal: { keyType?: string; workspaceId?: string }, log: RequestLog): boolean {
  if (principal.keyType === "organisation") return true;
  return !principal.workspaceId || log.workspaceId === principal.workspaceId;
}
