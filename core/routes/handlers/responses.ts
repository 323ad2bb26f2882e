import { presentResponse, schemaOf } from "../../inference/formats/responses/present.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest, notFound, unauthorized } from "../../http/errors.ts";
import { json } from "../../http/json.ts";
import { RESPONSE_INCLUDE_VALUES } from "../../features/responses/include.ts";
import type { InputItemQuery } from "../../features/responses/input-item-page.ts";
import { type ResponseOwner, responseOwnerOf } from "../../features/responses/owner.ts";
import { responseStoreOf } from "../../features/responses/response-store.ts";
import { createResponse, loadBackground } from "../../features/responses/create-response.ts";

/**
 * Stored responses (spec 4.1; OpenAI's Responses API): `GET /v1/responses/:id`, `DELETE /v1/responses/:id`,
 * `GET /v1/responses/:id/input_items`, `POST /v1/responses/:id/cancel`. A response belongs to the workspace that
 * made it (core/features/responses/owner.ts): any other caller gets 404.
 */
const storedResponseHandlers: HandlerMap = {
  async getResponse(request, ctx) {
    const owner = ownerOf(ctx);
    const query = new URL(request.url).searchParams;
    checkInclude(query);
    if (query.get("stream") === "true") {
      throw badRequest("Streaming a stored response is not supported; retrieve it without 'stream'.", "stream");
    }
    const entry = await responseStoreOf(ctx.services).get(owner, ctx.params.id!);
    if (!entry) throw responseNotFound(ctx.params.id!);
    return json(presentResponse(entry.response, schemaOfRequest(request)));
  },

  async deleteResponse(_request, ctx) {
    const id = ctx.params.id!;
    if (!(await responseStoreOf(ctx.services).delete(ownerOf(ctx), id))) throw responseNotFound(id);
    (await loadBackground()).abortBackground(id);
    return json({ id, object: "response", deleted: true });
  },

  async listInputItems(request, ctx) {
    const owner = ownerOf(ctx);
    const query = new URL(request.url).searchParams;
    checkInclude(query);
    const page = await responseStoreOf(ctx.services).listInputItems(owner, ctx.params.id!, readPageQuery(query));
    if (!page) throw responseNotFound(ctx.params.id!);
    return json(page);
  },

  async cancelResponse(request, ctx) {
    const { cancelBackground } = await loadBackground();
    const entry = await cancelBackground(responseStoreOf(ctx.services), ownerOf(ctx), ctx.params.id!);
    return json(presentResponse(entry.response, schemaOfRequest(request)));
  },
};

/** `POST /v1/responses` (core/features/responses/create-response.ts) and the stored responses. */
export const handlers: HandlerMap = {
  createResponse,
  ...storedResponseHandlers,
};

function ownerOf(ctx: RequestContext): ResponseOwner {
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  return responseOwnerOf(ctx.principal);
}

const responseNotFound = (id: string) => notFound(`Response with id '${id}' not found.`);

const schemaOfRequest = (request: Request) =>
  schemaOf(request.headers.get("x-gateway-beta") ?? request.headers.get("x-portkey-beta"));

/**
 * Checks `include` values (`include=a&include=b`, or `include[]=...` as the openai SDK writes arrays): unknown ones
 * answer 400. The stored response already holds what its create included, so a valid value changes nothing.
 */
function checkInclude(query: URLSearchParams): void {
  const values = [...query.getAll("include"), ...query.getAll("include[]")];
  const unknown = values.find((value) => !RESPONSE_INCLUDE_VALUES.has(value));
  if (unknown !== undefined) {
    throw badRequest(
      `Invalid 'include': '${unknown}' is not one of ${[...RESPONSE_INCLUDE_VALUES].join(", ")}.`,
      "include",
      "invalid_value",
    );
  }
}

/** The list query as given; the store validates it (limit 1..100, order asc|desc, cursors that are item ids). */
function readPageQuery(query: URLSearchParams): InputItemQuery {
  const limit = query.get("limit");
  return {
    limit: limit === null ? undefined : /^\d+$/.test(limit) ? Number(limit) : Number.NaN,
    order: query.get("order") ?? undefined,
    after: query.get("after") || undefined,
    before: query.get("before") || undefined,
  };
}
