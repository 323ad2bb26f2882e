import { workspaceScope } from "../../auth/scopes.ts";
import { audit } from "../../control/deps.ts";
import { controlDeps } from "../../routes/control-deps.ts";
import { readPage } from "../../control/paging.ts";
import { listResponse, readListQuery } from "../../http/lists.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { HttpError, badRequest, conflict, notFound } from "../../http/errors.ts";
import { json, readBody, validate } from "../../http/json.ts";
import * as z from "zod";
import {
  type LogExport,
  canSeeExport,
  createExportSchema,
  deniedFields,
  logExportStore,
  presentExport,
  updateExportSchema,
} from "./log-exports.ts";

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
export const exportHandlers: HandlerMap = {
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
