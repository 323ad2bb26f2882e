import { chatCompletionRequest, normaliseChatRequest } from "../../inference/gateway/schemas/chat.ts";
import { completionRequest } from "../../inference/gateway/schemas/completions.ts";
import { routeInference } from "../../inference/gateway/inference.ts";
import { newOutcome } from "../../inference/gateway/outcome.ts";
import { gatewayHeadersOf } from "../../inference/gateway/plan.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest } from "../../http/errors.ts";
import type { GatewayRequestHeaders } from "../../http/gateway-headers.ts";
import { json, readJson, validate } from "../../http/json.ts";
import type { RouteKind } from "../../providers/types.ts";
import { type ConfigNode, compileConfig } from "../../inference/routing/config.ts";
import { resolveRouting } from "../../inference/routing/source.ts";
import { promptMetadata } from "./metadata.ts";
import { type RenderedPrompt, renderPrompt } from "./render.ts";
import { promptRequest, splitPromptRequest } from "./request.ts";
import { type ResolvedPrompt, resolvePrompt } from "./resolve.ts";
import { answerKeyOf } from "../../inference/gateway/answer-key.ts";

/**
 * The prompt runtime behind `POST /v1/prompts/:id/render` and `/completions` (loaded on a prompt route's first
 * request, with mustache): resolve the version the path names, render it with the body's variables and
 * hyperparameters, then either answer the filled request or run it through the inference pipeline.
 */

interface Prepared {
  resolved: ResolvedPrompt;
  rendered: RenderedPrompt;
  stream?: boolean;
}

async function prepare(request: Request, ctx: RequestContext): Promise<Prepared> {
  const limit = ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES;
  const body = splitPromptRequest(validate(promptRequest, await readJson(request, limit)));
  const records = ctx.services.stores.records;
  // The router has decoded the parameter already (`pp_1%40latest` is `pp_1@latest`).
  const resolved = await resolvePrompt(records, ctx.principal!, ctx.params.id!);
  // The rendered request must fit where a client's own request would.
  const rendered = await renderPrompt(records, ctx.principal!, resolved.version, body, limit);
  return { resolved, rendered, stream: body.stream };
}

/** `/render`: the filled request, in the shape the portkey-ai SDK's PromptRenderResponse reads. */
export async function renderPromptRequest(request: Request, ctx: RequestContext): Promise<Response> {
  const { rendered, stream } = await prepare(request, ctx);
  return json({ success: true, data: { ...rendered.body, ...(stream === undefined ? {} : { stream }) } });
}

/**
 * `/completions`: the rendered request through the whole pipeline (routing, policies, guardrails, cache, logs),
 * as a chat completion for a chat template and a text completion for a text one; the answer is the provider's
 * completion object (or its stream) as on those routes.
 */
export async function promptCompletion(request: Request, ctx: RequestContext): Promise<Response> {
  return run(await prepare(request, ctx), request, ctx);
}

/**
 * The legacy `/generate` (the portkey-ai SDK's deprecated `generations.create`): a completion never streamed,
 * wrapped as `{success, data}`, with the routing headers of the completion.
 */
export async function promptGeneration(request: Request, ctx: RequestContext): Promise<Response> {
  const prepared = await prepare(request, ctx);
  const response = await run({ ...prepared, stream: false }, request, ctx);
  if (!response.ok) return response;
  const headers = Object.fromEntries([...response.headers].filter(([name]) => name.startsWith("x-gateway-")));
  return json({ success: true, data: await response.json() }, { headers });
}

async function run({ resolved, rendered, stream }: Prepared, request: Request, ctx: RequestContext): Promise<Response> {
  const route: RouteKind = rendered.kind === "chat" ? "chat" : "completions";
  const filled = { ...rendered.body, ...(stream === undefined ? {} : { stream }) };
  const body: Record<string, any> =
    route === "chat"
      ? normaliseChatRequest(validate(chatCompletionRequest, filled))
      : validate(completionRequest, filled);

  const gateway = gatewayHeadersOf(request, ctx);
  // The log and analytics see which prompt ran (spec 5.3's `_prompt`); the caller's own metadata stays.
  ctx.gateway = { ...gateway, metadata: promptMetadata(resolved, gateway.metadata) };
  const config = await promptRouting(ctx.gateway, ctx, resolved);

  const outcome = newOutcome(route, String(body.model), body.stream === true);
  outcome.requestBody = body;
  ctx.outcome = outcome;
  const prefix = route === "chat" ? "chatcmpl" : "cmpl";
  return routeInference(route, body, config, request, ctx, outcome, `${prefix}-${answerKeyOf(ctx)}`);
}

/**
 * Where a prompt run goes, most specific first: the request's own routing (`x-gateway-config`, a provider or
 * virtual key header: the caller chose), else the saved provider the prompt names (`virtual_key`, as the leaf
 * `@slug`), else the key's or workspace's default config.
 */
async function promptRouting(
  gateway: GatewayRequestHeaders,
  ctx: RequestContext,
  resolved: ResolvedPrompt,
): Promise<ConfigNode> {
  const requestChose =
    gateway.config !== undefined || gateway.provider !== undefined || gateway.virtualKey !== undefined;
  const saved = resolved.version.virtual_key?.replace(/^@/, "");
  if (!requestChose && saved) return compileConfig({ provider: `@${saved}` }, ctx.services.trustedHosts, "virtual_key");
  const config = await resolveRouting(gateway, ctx);
  if (!config) {
    throw badRequest(
      "No provider selected: the prompt names no saved provider; send x-gateway-provider with Authorization, or x-gateway-config.",
      "x-gateway-provider",
      "missing_provider",
    );
  }
  return config;
}
