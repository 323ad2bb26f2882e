import { workspaceScope } from "../../auth/scopes.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest, notFound, serviceUnavailable, HttpError, conflict } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";
import type { RequestLog } from "../../observe/logs/log-record.ts";
import { customLogRequest, listLogsQuery } from "../../observe/logs/schemas.ts";
import { audit } from "../../control/deps.ts";
import { controlDeps } from "../../routes/control-deps.ts";
import { readPage } from "../../control/paging.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";
import * as z from "zod";
import {
  type LogExport,
  canSeeExport,
  createExportSchema,
  deniedFields,
  logExportStore,
  presentExport,
  updateExportSchema,
} from "../../observe/exports/log-exports.ts";

/** Request logs: list with filters, one log with its bodies, custom log inserts, and log exports (core/observe/exports). */
const logHandlers: HandlerMap = {
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
    return json({
      object: "list",
      data: page.items.map(({ requestBody, responseBody, bodiesKey, ...summary }) => summary),
      has_more: page.cursor !== undefined,
      next_cursor: page.cursor ?? null,
    });
  },

  /** GET /v1/logs/traces/:traceId: the trace's logs as a tree of spans (parent span id -> children). */
  async getTrace(_request, ctx) {
    const principal = ctx.principal!;
    const traceId = ctx.params.traceId!;
    const page = await ctx.services.logger.list(
      principal.organisationId,
      { traceId, workspaceId: workspaceScope(principal, undefined) },
      MAX_TRACE_SPANS,
    );
    if (page.items.length === 0) throw notFound(`No logs with trace id '${traceId}'.`);
    return json({
      object: "trace",
      trace_id: traceId,
      spans: spanTree(page.items),
      truncated: page.cursor !== undefined,
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

const DOWNLOAD_URL_SECONDS = 3600;

async function load(ctx: RequestContext): Promise<LogExport> {
  const principal = ctx.principal!;
  const found = await logExportStore(ctx.services.stores.records).get(principal.organisationId, ctx.params.id!);
  if (!found || !canSeeExport(principal, found)) throw notFound(`No log export with id '${ctx.params.id}'.`);
  return found;
}

async function checkFields(ctx: RequestContext, workspaceId: string | undefined, fields: string[]): Promise<void> {
  const denied = new Set(
    (await deniedFields(ctx.services.stores.records, ctx.principal!.organisationId, workspaceId)).fields,
  );
  const asked = fields.filter((field) => denied.has(field));
  if (asked.length > 0) {
    throw badRequest(`These fields may not be exported: ${asked.join(", ")}.`, "requested_data", "denied_export_field");
  }
}

/** Log exports (spec 4.8, 5.5, 7): handlers mounted in the logs family (they share its /v1/logs prefix). */
const exportHandlers: HandlerMap = {
  async exportFieldRestrictions(request, ctx) {
    const query = validate(
      z.looseObject({ workspace_id: z.string().optional() }),
      Object.fromEntries(new URL(request.url).searchParams),
    );
    const workspaceId = workspaceScope(ctx.principal!, query.workspace_id);
    const denied = await deniedFields(ctx.services.stores.records, ctx.principal!.organisationId, workspaceId);
    return json({
      object: "log_export_field_restrictions",
      workspace_id: workspaceId ?? null,
      denied_fields: denied.fields,
      source: denied.source,
    });
  },

  async createExport(request, ctx) {
    const principal = ctx.principal!;
    const body = await readBody(request, createExportSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const workspaceId = workspaceScope(principal, body.workspace_id);
    await checkFields(ctx, workspaceId, body.requested_data);
    const created = await logExportStore(ctx.services.stores.records).create(principal.organisationId, {
      workspaceId,
      description: body.description ?? null,
      filters: body.filters,
      requestedData: body.requested_data,
      status: "draft",
      createdBy: { keyId: principal.keyId, userId: principal.userId, keySubType: principal.keySubType },
    });
    await audit(controlDeps(ctx), ctx.principal!, {
      action: "create",
      resourceType: "log_export",
      resourceId: created.id,
      workspaceId,
      after: presentExport(created),
    });
    return json(presentExport(created), { status: 201 });
  },

  async listExports(request, ctx) {
    const principal = ctx.principal!;
    const query = readListQuery(request);
    const workspaceId = workspaceScope(principal, query.workspace_id);
    const page = await readPage(() =>
      logExportStore(ctx.services.stores.records).list(principal.organisationId, {
        limit: query.limit,
        cursor: query.cursor,
        filter: (item) => canSeeExport(principal, item) && (!workspaceId || item.workspaceId === workspaceId),
      }),
    );
    return listResponse(page, (item) => presentExport(item as LogExport));
  },

  async getExport(_request, ctx) {
    return json(presentExport(await load(ctx)));
  },

  async updateExport(request, ctx) {
    const current = await load(ctx);
    const body = await readBody(request, updateExportSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    if (current.status !== "draft")
      throw conflict(`The export is ${current.status}; only drafts can be changed.`, "status");
    if (body.requested_data) await checkFields(ctx, current.workspaceId, body.requested_data);
    const next = await logExportStore(ctx.services.stores.records).update(current, {
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.filters ? { filters: body.filters } : {}),
      ...(body.requested_data ? { requestedData: body.requested_data } : {}),
    });
    await audit(controlDeps(ctx), ctx.principal!, {
      action: "update",
      resourceType: "log_export",
      resourceId: next.id,
      workspaceId: next.workspaceId,
      before: presentExport(current),
      after: presentExport(next),
    });
    return json(presentExport(next));
  },

  async startExport(_request, ctx) {
    const current = await load(ctx);
    if (current.status !== "draft")
      throw conflict(`The export is ${current.status}; only drafts can be started.`, "status");
    // Fields denied since the draft was made are refused now too.
    await checkFields(ctx, current.workspaceId, current.requestedData);
    const next = await logExportStore(ctx.services.stores.records).update(current, {
      status: "queued",
      queuedAt: Math.floor(Date.now() / 1000),
    });
    await ctx.services.stores.queue.send("exports", { exportId: next.id, organisationId: next.organisationId });
    await audit(controlDeps(ctx), ctx.principal!, {
      action: "start",
      resourceType: "log_export",
      resourceId: next.id,
      workspaceId: next.workspaceId,
    });
    return json(presentExport(next), { status: 202 });
  },

  async cancelExport(_request, ctx) {
    const current = await load(ctx);
    if (!["draft", "queued", "running"].includes(current.status))
      throw conflict(`The export is ${current.status} and cannot be cancelled.`, "status");
    const next = await logExportStore(ctx.services.stores.records).update(current, {
      status: "cancelled",
      finishedAt: Math.floor(Date.now() / 1000),
    });
    await audit(controlDeps(ctx), ctx.principal!, {
      action: "cancel",
      resourceType: "log_export",
      resourceId: next.id,
      workspaceId: next.workspaceId,
    });
    return json(presentExport(next));
  },

  async downloadExport(_request, ctx) {
    const current = await load(ctx);
    if (current.status !== "success" || !current.blobKey) {
      throw new HttpError(409, `The export is ${current.status}; it can be downloaded once it succeeded.`, {
        code: "export_not_ready",
      });
    }
    const url = await ctx.services.stores.blobs.signedUrl(current.blobKey, {
      expiresInSeconds: DOWNLOAD_URL_SECONDS,
      filename: `${current.id}.jsonl`,
    });
    return json({
      object: "log_export_download",
      id: current.id,
      signed_url: url,
      expires_at: Math.floor(Date.now() / 1000) + DOWNLOAD_URL_SECONDS,
    });
  },
};

/** Request logs and their exports: one family (the exports share its /v1/logs prefix). */
export const handlers: HandlerMap = { ...exportHandlers, ...logHandlers };
