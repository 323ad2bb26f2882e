import { loadFormat } from "../formats/registry.ts";
import { runInference } from "../gateway/inference.ts";
import { newOutcome } from "../gateway/outcome.ts";
import type { RequestContext } from "../http/context.ts";
import type { TransformContext } from "../providers/types.ts";
import { badRequest } from "../http/errors.ts";
import { readJson, validate } from "../http/json.ts";
import { isLateJson } from "../logs/late-json.ts";
import { mentionsServerSideMcp } from "../mcp/server-side/references.ts";
import { startBackground } from "./background.ts";
import { assignItemIds } from "./item-ids.ts";
import { responseOwnerOf } from "./owner.ts";
import { responseStoreOf } from "./response-store.ts";

/**
 * `POST /v1/responses` on every provider (DESIGN: an inbound format at the edge of the pipeline). Before the
 * pipeline: the body is validated, a `previous_response_id` is resolved by the gateway itself (the stored
 * conversation is put in front of the input: a provider never sees the id, so a chain may move between
 * providers). The pipeline then answers natively (OpenAI, Azure OpenAI) or through the chat adapter. After it:
 * the response and its input items are stored for the workspace (unless `store: false`), and `background`
 * responses answer at once and run on (core/responses/background.ts).
 */
export async function createResponse(request: Request, ctx: RequestContext): Promise<Response> {
  const responses = await import("../formats/responses/index.ts");
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

  const ownItems = inputItemsOf(body.input);
  const history = body.previous_response_id
    ? sendableHistory(await store.conversation(owner, String(body.previous_response_id)))
    : [];
  const sent = history.length > 0 || body.previous_response_id ? { ...body, input: [...history, ...ownItems] } : body;
  const requestId = `resp-${ctx.traceId.replace(/-/g, "").slice(0, 24)}`;

  const inputItems = assignItemIds(ownItems);
  const entry = (response: Record<string, any>, provider: string | undefined) => ({
    response,
    inputItems,
    context: [...history, ...ownItems],
    provider,
    native: provider === "openai" || provider === "azure-openai",
  });

  if (body.background === true) {
    // Answered at once; the run goes on after the answer (its log waits for it through the outcome).
    const started = responses.startedResponse({ ...body, background: true }, {
      requestId,
      now: Math.floor(Date.now() / 1000),
      model: String(body.model),
    } as TransformContext);
    const queued = { ...started, status: "queued", previous_response_id: body.previous_response_id ?? null };
    const outcome = newOutcome("responses", String(body.model), false);
    ctx.outcome = outcome;
    await startBackground(ctx, owner, entry(queued, undefined), async (signal) => {
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

  const response = serverSideMcp
    ? await serverSideMcp.run(sent, requestId)
    : await runInference("responses", sent, request, ctx, requestId);
  const outcome = ctx.outcome!;
  if (response.status !== 200) return response;
  // Stored before the answer ends, so a client that chains at once (previous_response_id) or reads it back finds
  // it, wherever that request lands: another Lambda instance reads only what the store has.
  const storing = stored
    ? outcome.done
        .then(async () => {
          if (outcome.error || outcome.status !== 200) return;
          const answer = answerOf(outcome.responseBody);
          if (answer?.object !== "response") return;
          const chained = { ...answer, previous_response_id: body.previous_response_id ?? null };
          await store.save(owner, entry(chained, outcome.provider));
        })
        .catch((error) => console.error(`[${ctx.traceId}] storing the response failed`, error))
    : undefined;
  if (storing) ctx.waitUntil(storing);
  if (body.stream === true) return storing ? endAfter(response, storing) : response;
  // A JSON answer: presented in the schema the client asked for, with the chain it belongs to.
  const answer = (await response.json()) as Record<string, any>;
  await storing;
  if (body.previous_response_id) answer.previous_response_id = body.previous_response_id;
  const presented = answer.object === "response" ? responses.presentResponse(answer, schema) : answer;
  if (answer.gateway_mcp) presented.gateway_mcp = answer.gateway_mcp;
  return Response.json(presented, {
    status: 200,
    headers: withoutLength(response.headers),
  });
}

function betaHeader(request: Request): string | null {
  return request.headers.get("x-gateway-beta") ?? request.headers.get("x-portkey-beta");
}

/** The request's own input as items (a string input is one user message). */
function inputItemsOf(input: unknown): Array<Record<string, any>> {
  if (typeof input === "string")
    return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  if (!Array.isArray(input)) return [];
  return input.map((item) =>
    item && typeof item === "object" && !("type" in item) ? { type: "message", ...item } : item,
  );
}

/**
 * A stored conversation as items a provider accepts again: item ids are the gateway's (or another provider's)
 * and would be read as references to items the provider stored, so they are dropped; reasoning items are only
 * meaningful to the provider that made them with their encrypted content, so the others are left out.
 */
function sendableHistory(items: Array<Record<string, any>>): Array<Record<string, any>> {
  const sendable: Array<Record<string, any>> = [];
  for (const item of items) {
    if (item.type === "reasoning" && typeof item.encrypted_content !== "string") continue;
    if (item.type === "reasoning") {
      sendable.push(item);
      continue;
    }
    const { id: _id, status: _status, ...rest } = item;
    sendable.push(rest);
  }
  return sendable;
}

/** The answer the outcome holds (JSON body, or the one a stream spelled). */
function answerOf(body: unknown): Record<string, any> | undefined {
  const value = isLateJson(body) ? body.toJSON() : body;
  return value && typeof value === "object" ? (value as Record<string, any>) : undefined;
}

/**
 * The stream, its end held back until `work` is done (the stored response): the events pass as they come.
 * Bounded, so a store that hangs cannot keep the client's stream open for long.
 */
function endAfter(response: Response, work: Promise<void>): Response {
  let timer: NodeJS.Timeout | undefined;
  const done = Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, END_WAIT_MS)))]).finally(
    () => clearTimeout(timer),
  );
  const body = response.body?.pipeThrough(new TransformStream<Uint8Array, Uint8Array>({ flush: () => done }));
  return new Response(body, { status: response.status, headers: response.headers });
}

/** Longest a stream's end waits for its response to be stored. */
const END_WAIT_MS = 10_000;

function withoutLength(headers: Headers): Headers {
  const copy = new Headers(headers);
  copy.delete("content-length");
  return copy;
}
