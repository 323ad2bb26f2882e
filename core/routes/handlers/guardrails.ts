import * as z from "zod";
import * as guardrails from "../../control/guardrails/service.ts";
import { guardrailCreateSchema, guardrailUpdateSchema } from "../../control/guardrails/schemas.ts";
import { guardrailInvokeRequest } from "../../inference/guardrails/invoke-request.ts";
import { usableGuardrail } from "../../inference/guardrails/resolve.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps, credentialDeps } from "../control-deps.ts";
import { notFound } from "../../http/errors.ts";
import { json, readBody, readJson, validate } from "../../http/json.ts";
import { listQuerySchema, listResponse, readListQuery } from "../../http/lists.ts";
import { loadOnce } from "../../util/load-once.ts";

/** Direct guardrail invocation, loaded with its first call and kept. */
const guardrailInvocation = loadOnce(() => import("../../inference/guardrails/invocation.ts"));

/**
 * Saved guardrails (`/v1/guardrails`) and their versions (`GET /v1/guardrails/:id?version=n`,
 * `GET /v1/guardrails/:id/versions`): parse, call core/control/guardrails/service.ts, shape the answer.
 */

const bodyLimit = (ctx: RequestContext) => ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
const target = (ctx: RequestContext) => ({ guardrail: ctx.params.id! });
const versionSchema = z.coerce.number().int().min(1);

/** The common list query, plus Portkey's `organisation_id` and page-number paging (`page_size`, `current_page` from 0). */
const guardrailListQuery = listQuerySchema.extend({
  organisation_id: z.string().min(1).max(200).optional(),
  page_size: z.coerce.number().int().min(1).max(1000).optional(),
  current_page: z.coerce.number().int().min(0).max(1_000_000).optional(),
});

/** Portkey's default page size when a client pages by number. */
const PORTKEY_PAGE_SIZE = 100;

function readGuardrailListQuery(request: Request): guardrails.GuardrailListQuery {
  const query = validate(guardrailListQuery, Object.fromEntries(new URL(request.url).searchParams));
  const byNumber = query.page_size !== undefined || query.current_page !== undefined;
  const limit = byNumber ? (query.page_size ?? PORTKEY_PAGE_SIZE) : query.limit;
  return {
    limit,
    cursor: query.cursor ?? query.after,
    offset: byNumber ? (query.current_page ?? 0) * limit : undefined,
    workspace_id: query.workspace_id,
    organisation_id: query.organisation_id,
  };
}

export const handlers: HandlerMap = {
  async createGuardrail(request, ctx) {
    const body = await readBody(request, guardrailCreateSchema, bodyLimit(ctx));
    return json(await guardrails.createGuardrail(credentialDeps(ctx), ctx.principal!, body), { status: 201 });
  },

  async listGuardrails(request, ctx) {
    const query = readGuardrailListQuery(request);
    return listResponse(await guardrails.listGuardrails(controlDeps(ctx), ctx.principal!, query));
  },

  async getGuardrail(request, ctx) {
    const version = async () => {
      const value = new URL(request.url).searchParams.get("version");
      return value === null ? undefined : validate(versionSchema, value, "version");
    };
    return json(await guardrails.getGuardrail(controlDeps(ctx), ctx.principal!, { ...target(ctx), version }));
  },

  async listGuardrailVersions(request, ctx) {
    const page = async () => readListQuery(request);
    const versions = await guardrails.listGuardrailVersions(controlDeps(ctx), ctx.principal!, { ...target(ctx), page });
    return listResponse(versions);
  },

  async updateGuardrail(request, ctx) {
    const changes = () => readBody(request, guardrailUpdateSchema, bodyLimit(ctx));
    return json(await guardrails.updateGuardrail(credentialDeps(ctx), ctx.principal!, { ...target(ctx), changes }));
  },

  async deleteGuardrail(_request, ctx) {
    const { id } = await guardrails.deleteGuardrail(controlDeps(ctx), ctx.principal!, target(ctx));
    return json({ id, object: "guardrail", deleted: true });
  },

  /**
   * `POST /v1/guardrails/:id/invoke` (scope `guardrails.invoke`): runs a saved guardrail's checks over a text or
   * chat messages and answers the verdicts, without any model call. A guardrail of another workspace answers
   * 404 like an unknown one. The runner and the checks are loaded on the first invocation
   * (core/inference/guardrails/invocation.ts).
   */
  async invokeGuardrail(request, ctx) {
    const body = validate(
      guardrailInvokeRequest,
      await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES),
    );
    const id = ctx.params.id!;
    const definition = await usableGuardrail(ctx, id);
    if (!definition) throw notFound(`No guardrail '${id}' that this key may invoke.`, "guardrail_not_found");
    const { invokeGuardrail } = await guardrailInvocation.get();
    return json(await invokeGuardrail(request, ctx, definition, body));
  },
};
