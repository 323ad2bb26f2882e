import * as z from "zod/mini";
import { type ResourceOwner, resourceOwnerOf } from "../../auth/resource-owner.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { notFound, unauthorized, badRequest } from "../../http/errors.ts";
import { json, validate, readBody } from "../../http/json.ts";
import { int } from "../../http/zod-mini.ts";
import { attachmentDisposition } from "../../store/content-disposition.ts";
import { fileStoreOf } from "../../features/files/file-store.ts";
import { type FilePurpose, FILE_PURPOSES, type StoredFile } from "../../features/files/types.ts";
import { uploadFile, namedProviderOf } from "../../features/files/upload.ts";
import { deferRequest, replayRequest, singleTargetOf } from "../../inference/gateway/deferred-request.ts";
import { closingConnection, readMultipartUpload } from "../../features/files/multipart.ts";
import { ensureProviderFile, hasFilesApi } from "../../features/files/provider-files.ts";
import { completeUploadSchema, createUploadSchema } from "../../features/files/upload-requests.ts";
import { MAX_PART_BYTES, type StoredUpload, uploadNotFound, uploadStoreOf } from "../../features/files/upload-store.ts";

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

const fileHandlers: HandlerMap = {
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

/**
 * OpenAI's Uploads API: a file sent in parts, each its own request (`POST /v1/files` takes the whole file in one,
 * more than a Lambda function URL's 6 MB). Create declares the file (name, purpose, total bytes, MIME type), parts
 * add up to it, complete joins them in the given order into a gateway file; cancel drops them. An upload belongs to
 * the workspace that created it: any other caller gets 404.
 */

/** Room for the multipart framing around a part's bytes. */
const PART_FORM_OVERHEAD = 64 * 1024;

const uploadHandlers: HandlerMap = {
  /**
   * `POST /v1/uploads`. When the request names one provider with a Files API (as `POST /v1/files` does), its
   * routing headers are kept sealed with the upload, and the completed file is copied there.
   */
  async createUpload(request, ctx) {
    const owner = ownerOf(ctx);
    const body = await readBody(request, createUploadSchema);
    const maxBytes = ctx.services.settings.GATEWAY_MAX_UPLOAD_BYTES;
    if (body.bytes > maxBytes) {
      throw badRequest(
        `bytes is ${body.bytes}, above the limit of ${maxBytes} bytes (GATEWAY_MAX_UPLOAD_BYTES).`,
        "bytes",
        "invalid_value",
      );
    }
    // Resolved now, so an unknown provider or a blocked config is refused before any part is sent.
    const target = await namedProviderOf(request, ctx);
    const deferred =
      target && hasFilesApi(target.provider) ? await deferRequest(request, ctx.principal!, ctx.services) : undefined;
    const stored = await uploadStoreOf(ctx.services).create(owner, {
      filename: body.filename,
      purpose: body.purpose,
      bytes: body.bytes,
      mimeType: body.mime_type,
      ...(deferred && { deferred }),
    });
    return json(stored.upload);
  },

  /** `POST /v1/uploads/:id/parts`: one part, the multipart field `data`, streamed into Blobs. */
  async addUploadPart(request, ctx) {
    const owner = ownerOf(ctx);
    const id = ctx.params.id!;
    const store = uploadStoreOf(ctx.services);
    // Refused before the body is read: an unknown, expired or finished upload takes no bytes.
    const found = await store.get(owner, id);
    if (!found) throw closingConnection(uploadNotFound(id));
    let form: Awaited<ReturnType<typeof readMultipartUpload<Awaited<ReturnType<typeof store.addPart>>>>>;
    try {
      form = await readMultipartUpload(request, {
        maxBytes: MAX_PART_BYTES + PART_FORM_OVERHEAD,
        fileField: "data",
        onFile: (part) => store.addPart(owner, id, part.body),
        // A part stored before the form turned out malformed stays: the client's complete names the parts it wants.
        discard: async () => {},
      });
    } catch (error) {
      throw closingConnection(error);
    }
    if (!form.file) throw badRequest("Missing required parameter: 'data'.", "data", "missing_required_parameter");
    return json(form.file.result);
  },

  /** `POST /v1/uploads/:id/complete`: the parts joined in `part_ids` order into one file. */
  async completeUpload(request, ctx) {
    const owner = ownerOf(ctx);
    const body = await readBody(request, completeUploadSchema);
    const completed = await uploadStoreOf(ctx.services).complete(
      owner,
      ctx.params.id!,
      { partIds: body.part_ids, ...(body.md5 !== undefined && { md5: body.md5 }) },
      (file, upload) => copyToProvider(file, upload, ctx),
    );
    return json(completed.upload);
  },

  /** `POST /v1/uploads/:id/cancel`: no parts are taken after, and those sent are deleted. */
  async cancelUpload(_request, ctx) {
    const cancelled = await uploadStoreOf(ctx.services).cancel(ownerOf(ctx), ctx.params.id!);
    return json(cancelled.upload);
  },
};

/** The completed file copied to the provider the create request named, with that request's routing. */
async function copyToProvider(file: StoredFile, upload: StoredUpload, ctx: RequestContext): Promise<void> {
  if (!upload.deferred) return;
  const replay = await replayRequest(upload.deferred, ctx.services, { path: "/v1/files", signal: ctx.signal });
  const target = await singleTargetOf(replay.request, replay.ctx);
  if (target && hasFilesApi(target.provider)) await ensureProviderFile(ctx.services, file, target, ctx.signal);
  await replay.settled();
}

/** Files and OpenAI's Uploads API: one family, one map. */
export const handlers: HandlerMap = { ...fileHandlers, ...uploadHandlers };
