import { loadFormat } from "../../inference/formats/registry.ts";
import { runInference } from "../../inference/gateway/inference.ts";
import { newOutcome } from "../../inference/gateway/outcome.ts";
import type { RequestContext } from "../../services.ts";
import type { TransformContext } from "../../providers/types.ts";
import { badRequest } from "../../http/errors.ts";
import { readJson, validate } from "../../http/json.ts";
import { isLateJson } from "../../observe/logs/late-json.ts";
import { presentResponse, type ResponseSchema } from "../../inference/formats/responses/present.ts";
import { mentionsServerSideMcp } from "../mcp/server-side/references.ts";
import { inputItemsOf, sendableHistory } from "./conversation.ts";
import { assignItemIds } from "./item-ids.ts";
import { resolveItemReferences } from "./item-references.ts";
import { storedBeforeLastEvent } from "./stored-before-end.ts";
import { responseOwnerOf } from "./owner.ts";
import { responseStoreOf } from "./response-store.ts";
import { loadOnce } from "../../util/load-once.ts";
import { answerKeyOf } from "../../inference/gateway/answer-key.ts";

/**
 * `POST /v1/responses` on every provider (DESIGN: an inbound format at the edge of the pipeline). Before the
 * pipeline: the body is validated, a `previous_response_id` is resolved by the gateway itself (the stored
 * conversation is put in front of the input: a provider never sees the id, so a chain may move between
 * providers), and `item_reference` input items are put back from the workspace's store
 * (core/features/responses/item-references.ts). The pipeline then answers natively (OpenAI, Azure OpenAI) or
 * through the chat adapter. The response and its input items are stored for the workspace (unless `store: false`)
 * before the answer ends, and `background` responses answer at once and run on (core/features/responses/background.ts).
 */
export async function createResponse(request: Request, ctx: RequestContext): Promise<Response> {
  const responses = await responsesFormat.get();
  await loadFormat("responses");
  const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const body = validate(responses.responsesRequest, json) as Record<string, any>;
  const schema = responses.schemaOf(betaHeader(request));
  // Server-side MCP tools (`@gateway-mcp/...`, beta server-side-mcp-2026-06-01): the gateway runs the tool loop.
  const serverSideMcp = mentionsServerSideMcp(body)
    ? await (await import("../mcp/server-side/responses.ts")).prepareServerSideMcpResponses(body, request, ctx)
    : undefined;
  const owner = responseOwnerOf(ctx.principal!);
  const store = responseStoreOf(ctx.services);
  const stored = body.store !== false;
  if (body.background === true && !stored) {
    throw badRequest("Background responses must be stored: `background` needs `store` to be true.", "background");
  }
  if (body.background === true && body.stream === true) {
    throw badRequest(
      "Streaming a background response is not supported: poll it with GET /v1/responses/{id}.",
      "stream",
    );
  }

  const givenItems = inputItemsOf(body.input);
  const [chain, ownItems] = await Promise.all([
    body.previous_response_id ? store.chain(owner, String(body.previous_response_id)) : undefined,
    resolveItemReferences(store, owner, givenItems),
  ]);
  const history = chain ? sendableHistory(chain.items) : [];
  // The chain goes back to the target that made it while it can; others get it without what was sealed for it.
  if (chain) ctx.conversation = { items: history.length, provider: chain.provider, target: chain.target };
  const expanded = history.length > 0 || body.previous_response_id || ownItems !== givenItems;
  const sent = expanded ? { ...body, input: [...history, ...ownItems] } : body;
  const requestId = `resp-${answerKeyOf(ctx)}`;

  // Ids for the stored input items, made when the response is stored (never for `store: false`), once.
  let inputItems: ReturnType<typeof assignItemIds> | undefined;
  const storedItems = () => {
    inputItems ??= assignItemIds(ownItems);
    return inputItems;
  };
  const entry = (response: Record<string, any>, provider: string | undefined, target?: string) => ({
    response,
    inputItems: storedItems(),
    context: [...history, ...ownItems],
    provider,
    native: isNative(provider),
    target,
  });

  const run: ResponseRun = { request, ctx, body, sent, requestId, responses, schema, owner, entry };
  if (body.background === true) return answerInBackground(run);

  const response = serverSideMcp
    ? await serverSideMcp.run(sent, requestId)
    : await runInference("responses", sent, request, ctx, requestId);
  if (response.status !== 200) return response;
  const storing = stored ? storeWhenDone(run, store) : undefined;
  if (body.stream === true) {
    // The server-side MCP loop's stream ends with its own bookkeeping: stored after it.
    return storing && !serverSideMcp ? storedBeforeLastEvent(response, storing) : response;
  }
  const text = await response.text();
  await storing;
  return new Response(presentAnswer(text, body, schema, isNative(ctx.outcome!.provider)), {
    status: 200,
    headers: withoutLength(response.headers),
  });
}

/**
 * A JSON answer as the client gets it. A provider's native Responses answer goes out as the provider sent it
 * (every field it has, in its order); only the chain it belongs to is put back, since the gateway resolved
 * `previous_response_id` itself and the provider never saw it. A translated answer is presented in the schema the
 * client asked for.
 */
function presentAnswer(text: string, body: Record<string, any>, schema: ResponseSchema, native: boolean): string {
  if (native && !body.previous_response_id) return text;
  const answer = JSON.parse(text) as Record<string, any>;
  if (answer?.object !== "response") return text;
  if (body.previous_response_id) answer.previous_response_id = body.previous_response_id;
  if (native) return JSON.stringify(answer);
  const presented = presentResponse(answer, schema);
  if (answer.gateway_mcp) presented.gateway_mcp = answer.gateway_mcp;
  return JSON.stringify(presented);
}

/** Providers whose Responses API the gateway speaks natively (their answers are theirs, not the gateway's). */
const isNative = (provider: string | undefined): boolean => provider === "openai" || provider === "azure-openai";

/** What one `POST /v1/responses` call has worked out before the pipeline runs. */
interface ResponseRun {
  request: Request;
  ctx: RequestContext;
  /** The validated body, as the client sent it. */
  body: Record<string, any>;
  /** What the pipeline is sent: the body with the stored conversation in front of its input. */
  sent: Record<string, any>;
  requestId: string;
  responses: typeof import("../../inference/formats/responses/index.ts");
  schema: ReturnType<typeof import("../../inference/formats/responses/index.ts").schemaOf>;
  owner: ReturnType<typeof responseOwnerOf>;
  /** The stored entry of a response: it, its input items and the context it answered. */
  entry(
    response: Record<string, any>,
    provider: string | undefined,
    /** The target that answered (target-key.ts): the chain goes back to it while it can. */
    target?: string,
  ): Parameters<ReturnType<typeof responseStoreOf>["save"]>[1];
}

const background = loadOnce(() => import("./background.ts"));

/** The Responses format, loaded with the first call: a dynamic import runs the module loader each time (~5 µs). */
const responsesFormat = loadOnce(() => import("../../inference/formats/responses/index.ts"));

/**
 * Background runs (their run loop and cancel polling): loaded by the first background response, cancel or delete
 * of a process, once, not on the responses function's cold start.
 */
export function loadBackground(): Promise<typeof import("./background.ts")> {
  return background.get();
}

/** A `background` response: answered at once as `queued`, run after the answer (core/features/responses/background.ts). */
async function answerInBackground(run: ResponseRun): Promise<Response> {
  const { request, ctx, body, sent, requestId, responses, schema, owner, entry } = run;
  // Answered at once; the run goes on after the answer (its log waits for it through the outcome).
  const started = responses.startedResponse({ ...body, background: true }, {
    requestId,
    now: Math.floor(Date.now() / 1000),
    model: String(body.model),
  } as TransformContext);
  const queued = { ...started, status: "queued", previous_response_id: body.previous_response_id ?? null };
  const outcome = newOutcome("responses", String(body.model), false);
  ctx.outcome = outcome;
  await (await loadBackground()).startBackground(ctx, owner, entry(queued, undefined), async (signal) => {
    // The client's request is over: only a cancel (or delete) stops the run.
    const runCtx: RequestContext = { ...ctx, signal };
    try {
      const answer = await runInference(
        "responses",
        { ...sent, background: false },
        request,
        runCtx,
        requestId,
        outcome,
      );
      await outcome.done;
      const final = answerOf(outcome.responseBody) ?? (await answer.json().catch(() => undefined));
      if (final?.object !== "response") throw new Error("the provider gave no response");
      return { ...final, previous_response_id: body.previous_response_id ?? null };
    } catch (error) {
      outcome.error ??= {
        status: (error as { status?: number }).status ?? 500,
        message: (error as Error).message,
        code: (error as { code?: string | null }).code ?? null,
      };
      outcome.finish();
      throw error;
    }
  });
  return Response.json(responses.presentResponse(queued, schema), { status: 200 });
}

/**
 * Stores the response and its input items for the workspace once the answer has ended well; settles (never
 * rejects) when the write is done. The caller holds the answer's end until then: a client continuing the chain,
 * or reading the response, the instant it has the answer must find it, on any process.
 */
function storeWhenDone(run: ResponseRun, store: ReturnType<typeof responseStoreOf>): Promise<void> {
  const { ctx, body, owner, entry } = run;
  const outcome = ctx.outcome!;
  const storing = outcome.done
    .then(async () => {
      if (outcome.error || outcome.status !== 200) return;
      const answer = answerOf(outcome.responseBody);
      if (answer?.object !== "response") return;
      const chained = { ...answer, previous_response_id: body.previous_response_id ?? null };
      await store.save(owner, entry(chained, outcome.provider, outcome.targetKey));
    })
    .catch((error) => console.error(`[${ctx.traceId}] storing the response failed`, error));
  // Also for a client that leaves before the end: the platform keeps the write going.
  ctx.waitUntil(storing);
  return storing;
}

function betaHeader(request: Request): string | null {
  return request.headers.get("x-gateway-beta") ?? request.headers.get("x-portkey-beta");
}

/** The answer the outcome holds (JSON body, or the one a stream spelled). */
function answerOf(body: unknown): Record<string, any> | undefined {
  const value = isLateJson(body) ? body.toJSON() : body;
  return value && typeof value === "object" ? (value as Record<string, any>) : undefined;
}

/**
 * The answer's headers without its length, as a plain record: the local server keeps a record as it is, where a
 * `Headers` copy was validated, copied and sorted again (a tenth of a translated JSON answer's CPU).
 */
function withoutLength(headers: Headers): Record<string, string> {
  const copy: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== "content-length") copy[name] = value;
  });
  return copy;
}
