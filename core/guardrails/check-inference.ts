import { routeInference } from "../gateway/inference.ts";
import { newOutcome } from "../gateway/outcome.ts";
import { gatewayHeadersOf } from "../gateway/plan.ts";
import type { RequestContext } from "../http/context.ts";
import { HttpError, errorResponse } from "../http/errors.ts";
import { logRequest } from "../logs/log-request.ts";
import { resolveRouting } from "../routing/source.ts";
import { readBounded } from "../util/read-bounded.ts";
import { AnswerTooLarge, MAX_ANSWER_BYTES, parsedJson } from "./outbound-json.ts";
import { guardrailFreeContext } from "./resolve.ts";
import type { CheckEnvironment } from "./types.ts";

/**
 * A check's model call (a model-graded check's judge, a moderation check): the gateway's own pipeline as a
 * sub-request of the guarded request, like the semantic cache's embedding call: routing, credentials,
 * retries, usage limits and cost, and a request log of its own (same trace id). It runs no guardrails itself.
 * `config` is a saved config id or slug, or an inline config object (refused, like any inline config, where
 * `block_inline_config` is on). Both routes go through the inference pipeline, so a moderation check works on
 * every provider with a moderations route (Mistral's answer mapped to OpenAI's categories) and is logged as a
 * moderations request.
 */

const ROUTE_PATHS = { chat: "/v1/chat/completions", moderations: "/v1/moderations" } as const;

export function checkInference(request: Request, ctx: RequestContext): CheckEnvironment["infer"] {
  return async (route, body, config, signal) => {
    const path = ROUTE_PATHS[route];
    // The judge's answer is read whole: never a stream.
    const sent: Record<string, unknown> = route === "chat" ? { ...body, stream: false } : body;
    const gateway = {
      ...gatewayHeadersOf(request, ctx),
      config: typeof config === "string" ? config : JSON.stringify(config),
    };
    const subRequest = new Request(new URL(path, request.url), {
      method: "POST",
      headers: subRequestHeaders(request.headers),
      body: JSON.stringify(sent),
    });
    const sub = guardrailFreeContext(ctx, {
      path,
      gateway,
      signal: AbortSignal.any([ctx.signal, signal]),
      outcome: undefined,
    });
    let response: Response;
    try {
      const node = (await resolveRouting(gateway, sub))!;
      const outcome = newOutcome(route, typeof sent.model === "string" ? sent.model : "", false);
      outcome.requestBody = sent;
      sub.outcome = outcome;
      response = await routeInference(route, sent, node, subRequest, sub, outcome, `guardrail-${ctx.traceId}`);
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      response = errorResponse(error);
    }
    let text: string;
    try {
      text = response.body
        ? (await readBounded(response.body, MAX_ANSWER_BYTES, () => new AnswerTooLarge())).toString("utf8")
        : "";
    } finally {
      if (ctx.principal) ctx.waitUntil(logRequest(subRequest, response, { path }, sub));
    }
    return { status: response.status, json: parsedJson(text) };
  };
}

/**
 * What the sub-request keeps of the guarded request's headers: the provider credentials a config target may
 * take from them (Authorization for the same provider, the gateway's cloud headers). Nothing else is passed
 * on, so none of the client's other headers reaches the judge's provider.
 */
function subRequestHeaders(headers: Headers): Headers {
  const kept = new Headers({ "content-type": "application/json" });
  for (const [name, value] of headers) {
    if (name === "authorization" || name.startsWith("x-gateway-") || name.startsWith("x-portkey-"))
      kept.set(name, value);
  }
  return kept;
}
