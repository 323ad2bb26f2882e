import * as z from "zod";
import * as collections from "../../control/prompts/collections.ts";
import * as labels from "../../control/prompts/labels.ts";
import * as partials from "../../control/prompts/partials.ts";
import * as sharing from "../../control/prompts/sharing.ts";
import * as prompts from "../../control/prompts/service.ts";
import {
  collectionCreateSchema,
  collectionUpdateSchema,
  forkSchema,
  labelCreateSchema,
  labelUpdateSchema,
  partialCreateSchema,
  partialUpdateSchema,
  promptCreateSchema,
  promptUpdateSchema,
  promptVersionUpdateSchema,
  publishSchema,
  shareSchema,
  unshareSchema,
} from "../../control/prompts/schemas.ts";
import { offsetOf } from "../../control/paging.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps } from "../control-deps.ts";
import { json, readBody, validate } from "../../http/json.ts";
import { listResponse } from "../../http/lists.ts";

/**
 * The `prompts` route family (core/routes/table.ts): saved prompts and their versions (`/v1/prompts`), partials
 * (`/v1/prompts/partials`), labels (`/v1/labels`), collections (`/v1/collections`) and sharing
 * (`/v2/prompts/.../share|unshare|fork`). Parse, call the core/control services, shape the answer. The
 * prompt runtime (render, completions) adds its handlers to this same map.
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const runtime = () => import("../../features/prompts/runtime.ts");
const versionNumber = z.coerce.number().int().min(1).max(100_000_000);

/** Portkey's page-number paging (`current_page` from 0, `page_size`), or ours (`limit`, `cursor`). */
const listQuery = z.looseObject({
  limit: z.coerce.number().int().min(1).max(1000).optional(),
  cursor: z.string().max(200).optional(),
  after: z.string().max(200).optional(),
  page_size: z.coerce.number().int().min(1).max(1000).optional(),
  current_page: z.coerce.number().int().min(0).max(1_000_000).optional(),
  workspace_id: z.string().min(1).max(200).optional(),
  collection_id: z.string().min(1).max(200).optional(),
  parent_collection_id: z.string().min(1).max(200).optional(),
  search: z.string().max(255).optional(),
  type: z.enum(["shared"]).optional(),
  show_prompt_share: z.enum(["true", "false"]).optional(),
});

/** Portkey's default page size. */
const PAGE_SIZE = 100;

function readListQuery(request: Request) {
  const query = validate(listQuery, Object.fromEntries(new URL(request.url).searchParams));
  const limit = query.page_size ?? query.limit ?? PAGE_SIZE;
  const offset = query.current_page !== undefined ? query.current_page * limit : offsetOf(query.cursor ?? query.after);
  return {
    limit,
    offset,
    workspace_id: query.workspace_id,
    collection_id: query.collection_id,
    parent_collection_id: query.parent_collection_id,
    search: query.search,
    type: query.type,
    show_prompt_share: query.show_prompt_share === "true",
  };
}

/** `?version=n` on a read, validated only once the caller may read the resource. */
const versionQuery = (request: Request) => async () => {
  const value = new URL(request.url).searchParams.get("version");
  return value === null ? undefined : validate(versionNumber, value, "version");
};

const versionParam = (ctx: RequestContext) => validate(versionNumber, ctx.params.versionId, "versionId");

const deleted =
  (object: string) =>
  ({ id }: { id: string }) =>
    json({ id, object, deleted: true });

export const handlers: HandlerMap = {
  // --- prompts ---------------------------------------------------------------------------------------------
  async createPrompt(request, ctx) {
    const body = await readBody(request, promptCreateSchema, bodyLimit(ctx));
    return json(await prompts.createPrompt(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },
  async listPrompts(request, ctx) {
    return listResponse(await prompts.listPrompts(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },
  async getPrompt(request, ctx) {
    const input = { prompt: ctx.params.id!, version: versionQuery(request) };
    return json(await prompts.getPrompt(controlDeps(ctx), ctx.principal!, input));
  },
  async updatePrompt(request, ctx) {
    const changes = () => readBody(request, promptUpdateSchema, bodyLimit(ctx));
    return json(await prompts.updatePrompt(controlDeps(ctx), ctx.principal!, { prompt: ctx.params.id!, changes }));
  },
  async deletePrompt(_request, ctx) {
    return deleted("prompt")(await prompts.deletePrompt(controlDeps(ctx), ctx.principal!, { prompt: ctx.params.id! }));
  },
  async publishPrompt(request, ctx) {
    const version = async () => (await readBody(request, publishSchema, bodyLimit(ctx))).version;
    return json(await prompts.publishPrompt(controlDeps(ctx), ctx.principal!, { prompt: ctx.params.id!, version }));
  },
  async listPromptVersions(request, ctx) {
    const { limit, offset } = readListQuery(request);
    const input = { prompt: ctx.params.id!, limit, offset };
    return listResponse(await prompts.listPromptVersions(controlDeps(ctx), ctx.principal!, input));
  },
  async getPromptVersion(_request, ctx) {
    const input = { prompt: ctx.params.id!, version: versionParam(ctx) };
    return json(await prompts.getPromptVersion(controlDeps(ctx), ctx.principal!, input));
  },
  async updatePromptVersion(request, ctx) {
    const labelId = async () => (await readBody(request, promptVersionUpdateSchema, bodyLimit(ctx))).label_id;
    const input = { prompt: ctx.params.id!, version: versionParam(ctx), labelId };
    return json(await prompts.labelPromptVersion(controlDeps(ctx), ctx.principal!, input));
  },

  // --- partials --------------------------------------------------------------------------------------------
  async createPartial(request, ctx) {
    const body = await readBody(request, partialCreateSchema, bodyLimit(ctx));
    return json(await partials.createPartial(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },
  async listPartials(request, ctx) {
    return listResponse(await partials.listPartials(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },
  async getPartial(request, ctx) {
    const input = { partial: ctx.params.id!, version: versionQuery(request) };
    return json(await partials.getPartial(controlDeps(ctx), ctx.principal!, input));
  },
  async updatePartial(request, ctx) {
    const changes = () => readBody(request, partialUpdateSchema, bodyLimit(ctx));
    return json(await partials.updatePartial(controlDeps(ctx), ctx.principal!, { partial: ctx.params.id!, changes }));
  },
  async deletePartial(_request, ctx) {
    const result = await partials.deletePartial(controlDeps(ctx), ctx.principal!, { partial: ctx.params.id! });
    return deleted("prompt_partial")(result);
  },
  async publishPartial(request, ctx) {
    const version = async () => (await readBody(request, publishSchema, bodyLimit(ctx))).version;
    return json(await partials.publishPartial(controlDeps(ctx), ctx.principal!, { partial: ctx.params.id!, version }));
  },
  async listPartialVersions(request, ctx) {
    const { limit, offset } = readListQuery(request);
    const input = { partial: ctx.params.id!, limit, offset };
    return listResponse(await partials.listPartialVersions(controlDeps(ctx), ctx.principal!, input));
  },

  // --- labels ----------------------------------------------------------------------------------------------
  async createLabel(request, ctx) {
    const body = await readBody(request, labelCreateSchema, bodyLimit(ctx));
    return json(await labels.createLabel(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },
  async listLabels(request, ctx) {
    return listResponse(await labels.listLabels(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },
  async getLabel(_request, ctx) {
    return json(await labels.getLabel(controlDeps(ctx), ctx.principal!, { label: ctx.params.id! }));
  },
  async updateLabel(request, ctx) {
    const changes = () => readBody(request, labelUpdateSchema, bodyLimit(ctx));
    return json(await labels.updateLabel(controlDeps(ctx), ctx.principal!, { label: ctx.params.id!, changes }));
  },
  async deleteLabel(_request, ctx) {
    return deleted("label")(await labels.deleteLabel(controlDeps(ctx), ctx.principal!, { label: ctx.params.id! }));
  },

  // --- collections -----------------------------------------------------------------------------------------
  async createCollection(request, ctx) {
    const body = await readBody(request, collectionCreateSchema, bodyLimit(ctx));
    return json(await collections.createCollection(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },
  async listCollections(request, ctx) {
    return listResponse(await collections.listCollections(controlDeps(ctx), ctx.principal!, readListQuery(request)));
  },
  async getCollection(_request, ctx) {
    return json(await collections.getCollection(controlDeps(ctx), ctx.principal!, { collection: ctx.params.id! }));
  },
  async updateCollection(request, ctx) {
    const changes = () => readBody(request, collectionUpdateSchema, bodyLimit(ctx));
    const input = { collection: ctx.params.id!, changes };
    return json(await collections.updateCollection(controlDeps(ctx), ctx.principal!, input));
  },
  async deleteCollection(_request, ctx) {
    const result = await collections.deleteCollection(controlDeps(ctx), ctx.principal!, {
      collection: ctx.params.id!,
    });
    return deleted("collection")(result);
  },

  // --- sharing ---------------------------------------------------------------------------------------------
  async sharePrompt(request, ctx) {
    const body = () => readBody(request, shareSchema, bodyLimit(ctx));
    return json(await sharing.share(controlDeps(ctx), ctx.principal!, { kind: "prompt", id: ctx.params.id!, body }));
  },
  async unsharePrompt(request, ctx) {
    const body = () => readBody(request, unshareSchema, bodyLimit(ctx));
    return json(await sharing.unshare(controlDeps(ctx), ctx.principal!, { kind: "prompt", id: ctx.params.id!, body }));
  },
  async forkPrompt(request, ctx) {
    const body = () => readBody(request, forkSchema, bodyLimit(ctx));
    const forked = await sharing.fork(controlDeps(ctx), ctx.principal!, { kind: "prompt", id: ctx.params.id!, body });
    return json(forked, { status: 201 });
  },
  async sharePartial(request, ctx) {
    const body = () => readBody(request, shareSchema, bodyLimit(ctx));
    return json(await sharing.share(controlDeps(ctx), ctx.principal!, { kind: "partial", id: ctx.params.id!, body }));
  },
  async unsharePartial(request, ctx) {
    const body = () => readBody(request, unshareSchema, bodyLimit(ctx));
    const input = { kind: "partial" as const, id: ctx.params.id!, body };
    return json(await sharing.unshare(controlDeps(ctx), ctx.principal!, input));
  },
  async forkPartial(request, ctx) {
    const body = () => readBody(request, forkSchema, bodyLimit(ctx));
    const forked = await sharing.fork(controlDeps(ctx), ctx.principal!, { kind: "partial", id: ctx.params.id!, body });
    return json(forked, { status: 201 });
  },

  // --- run time: render and completions (the runtime, with mustache, loads on first use) ------------------------

  async renderPrompt(request, ctx) {
    return (await runtime()).renderPromptRequest(request, ctx);
  },

  async promptCompletions(request, ctx) {
    return (await runtime()).promptCompletion(request, ctx);
  },

  /** The legacy `POST /v1/prompts/:id/generate` (the portkey-ai SDK's deprecated `generations.create`). */
  async generatePrompt(request, ctx) {
    return (await runtime()).promptGeneration(request, ctx);
  },
};
