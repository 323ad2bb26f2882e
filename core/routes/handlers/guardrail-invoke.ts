import { guardrailInvokeRequest } from "../../guardrails/invoke-request.ts";
import { usableGuardrail } from "../../guardrails/resolve.ts";
import type { HandlerMap } from "../../http/context.ts";
import { notFound } from "../../http/errors.ts";
import { json, readJson, validate } from "../../http/json.ts";

/**
 * `POST /v1/guardrails/:id/invoke` (scope `guardrails.invoke`): runs a saved guardrail's checks over a text or
 * chat messages and answers the verdicts, without any model call. A guardrail of another workspace answers 404
 * like an unknown one. The request is logged like every authenticated request; the runner and the checks are
 * loaded on the first invocation (core/guardrails/invocation.ts).
 */
export const handlers: HandlerMap = {
  async invokeGuardrail(request, ctx) {
    const body = validate(
      guardrailInvokeRequest,
      await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES),
    );
    const id = ctx.params.id!;
    const definition = await usableGuardrail(ctx, id);
    if (!definition) throw notFound(`No guardrail '${id}' that this key may invoke.`, "guardrail_not_found");
    const { invokeGuardrail } = await import("../../guardrails/invocation.ts");
    return json(await invokeGuardrail(request, ctx, definition, body));
  },
};
