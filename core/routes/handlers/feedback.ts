import type { Principal } from "../../auth/principal.ts";
import { audit } from "../../control/deps.ts";
import { controlDeps } from "../control-deps.ts";
import {
  createFeedbackSchema,
  feedbackStore,
  presentFeedback,
  updateFeedbackSchema,
} from "../../observe/feedback/feedback.ts";
import type { HandlerMap } from "../../http/context.ts";
import { forbidden, notFound } from "../../http/errors.ts";
import { json, readBody, readJson, validate } from "../../http/json.ts";
import { withoutPathEchoes } from "../../http/path-echoes.ts";

/** Spec 5.5: feedback is created and updated with workspace keys only; admin (organisation) keys get 403. */
function workspaceOf(principal: Principal): string {
  if (principal.keyType === "organisation" || !principal.workspaceId) {
    throw forbidden(
      "Feedback is created and updated with a workspace API key; organisation keys cannot.",
      "workspace_key_required",
    );
  }
  return principal.workspaceId;
}

/** Feedback on traced requests (POST /v1/feedback, PUT /v1/feedback/:id), counted into analytics. */
export const handlers: HandlerMap = {
  async createFeedback(request, ctx) {
    const principal = ctx.principal!;
    const workspaceId = workspaceOf(principal);
    const body = await readBody(request, createFeedbackSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const feedback = await feedbackStore(ctx.services.stores.records).create(principal.organisationId, {
      workspaceId,
      traceId: body.trace_id,
      value: body.value,
      weight: body.weight,
      metadata: body.metadata ?? null,
      createdBy: { keyId: principal.keyId, userId: principal.userId },
    });
    await ctx.services.analytics.recordFeedback({
      organisationId: principal.organisationId,
      workspaceId,
      createdAt: feedback.createdAt * 1000,
      count: 1,
      weightedValue: feedback.value * feedback.weight,
      weight: feedback.weight,
    });
    await audit(controlDeps(ctx), ctx.principal!, {
      action: "create",
      resourceType: "feedback",
      resourceId: feedback.id,
      workspaceId,
      after: presentFeedback(feedback),
    });
    return json(
      {
        status: "success",
        message: "Feedback successfully saved",
        feedback_ids: [feedback.id],
        ...presentFeedback(feedback),
      },
      { status: 201 },
    );
  },

  async updateFeedback(request, ctx) {
    const principal = ctx.principal!;
    const workspaceId = workspaceOf(principal);
    const raw = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const store = feedbackStore(ctx.services.stores.records);
    const current = await store.get(principal.organisationId, ctx.params.id!);
    if (!current || current.workspaceId !== workspaceId) throw notFound(`No feedback with id '${ctx.params.id}'.`);
    // portkey-ai's feedback.update sends the id (and the trace, if the caller gave it) again in the body, its
    // keys made snake_case (`feedbackID` -> `feedback_id`).
    const echoes = { feedback_id: ctx.params.id, trace_id: current.traceId };
    const body = validate(updateFeedbackSchema, withoutPathEchoes(raw, echoes));
    const next = await store.update(current, {
      ...(body.value !== undefined ? { value: body.value } : {}),
      ...(body.weight !== undefined ? { weight: body.weight } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
    });
    // Analytics keep sums, so an update adds the difference to the buckets of the original feedback.
    await ctx.services.analytics.recordFeedback({
      organisationId: principal.organisationId,
      workspaceId,
      createdAt: current.createdAt * 1000,
      count: 0,
      weightedValue: next.value * next.weight - current.value * current.weight,
      weight: next.weight - current.weight,
    });
    await audit(controlDeps(ctx), ctx.principal!, {
      action: "update",
      resourceType: "feedback",
      resourceId: next.id,
      workspaceId,
      before: presentFeedback(current),
      after: presentFeedback(next),
    });
    return json({ status: "success", message: "Feedback successfully updated", ...presentFeedback(next) });
  },
};
