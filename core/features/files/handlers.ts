import * as z from "zod/mini";
import { type ResourceOwner, resourceOwnerOf } from "../../auth/resource-owner.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { notFound, unauthorized } from "../../http/errors.ts";
import { json, validate } from "../../http/json.ts";
import { int } from "../../http/zod-mini.ts";
import { attachmentDisposition } from "../../store/content-disposition.ts";
import { fileStoreOf } from "./file-store.ts";
import { type FilePurpose, FILE_PURPOSES } from "./types.ts";
import { uploadFile } from "./upload.ts";

/**
 * The files routes (spec 2.7; OpenAI's Files API): upload, list, retrieve, content, delete. A file belongs to the
 * workspace that uploaded it: any other caller gets 404, and never sees it listed.
 */

/** `GET /v1/files` query: OpenAI's `purpose`, `limit` (1..10000, default 10000), `after`, `order` (default desc). */
const listQuery = z.object({
  purpose: z.optional(z.enum(FILE_PURPOSES as unknown as [FilePurpose, ...FilePurpose[]])),
  limit: z._default(
    z.pipe(
      z.string().check(z.regex(/^\d{1,6}$/, "expected an integer from 1 to 10000")),
      z.pipe(z.transform(Number), int(z.gte(1), z.lte(10_000))),
    ),
    10_000,
  ),
  after: z.optional(z.string().check(z.minLength(1), z.maxLength(256))),
  order: z._default(z.enum(["asc", "desc"]), "desc"),
});

export const fileHandlers: HandlerMap = {
  uploadFile,

  async listFiles(request, ctx) {
    const params = new URL(request.url).searchParams;
    const query = validate(listQuery, {
      purpose: params.get("purpose") ?? undefined,
      limit: params.get("limit") ?? undefined,
      after: params.get("after") ?? undefined,
      order: params.get("order") ?? undefined,
    });
    const page = await fileStoreOf(ctx.services).list(ownerOf(ctx), query);
    const data = page.items.map((stored) => stored.file);
    return json({
      object: "list",
      data,
      has_more: page.hasMore,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
    });
  },

  async getFile(_request, ctx) {
    const stored = await fileStoreOf(ctx.services).get(ownerOf(ctx), ctx.params.id!);
    if (!stored) throw fileNotFound(ctx.params.id!);
    return json(stored.file);
  },

  async fileContent(_request, ctx) {
    const found = await fileStoreOf(ctx.services).content(ownerOf(ctx), ctx.params.id!);
    if (!found) throw fileNotFound(ctx.params.id!);
    return new Response(found.body, {
      headers: {
        "content-type": found.file.contentType,
        "content-disposition": attachmentDisposition(found.file.file.filename),
      },
    });
  },

  async deleteFile(_request, ctx) {
    const id = ctx.params.id!;
    if (!(await fileStoreOf(ctx.services).delete(ownerOf(ctx), id))) throw fileNotFound(id);
    return json({ id, object: "file", deleted: true });
  },
};

function ownerOf(ctx: RequestContext): ResourceOwner {
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  return resourceOwnerOf(ctx.principal);
}

/** OpenAI's wording; the id is echoed only when it could be one (not an arbitrary string a client sent). */
const fileNotFound = (id: string) =>
  notFound(/^[\w.-]{1,200}$/.test(id) ? `No such File object: ${id}` : "No such File object.");
