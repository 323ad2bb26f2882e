import { type ResourceOwner, resourceOwnerOf } from "../../auth/resource-owner.ts";
import { deferRequest, replayRequest, singleTargetOf } from "../../inference/gateway/deferred-request.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { badRequest, unauthorized } from "../../http/errors.ts";
import { json, readBody } from "../../http/json.ts";
import { closingConnection, readMultipartUpload } from "./multipart.ts";
import { ensureProviderFile, hasFilesApi } from "./provider-files.ts";
import { namedProviderOf } from "./upload.ts";
import { completeUploadSchema, createUploadSchema } from "./upload-requests.ts";
import { MAX_PART_BYTES, type StoredUpload, uploadNotFound, uploadStoreOf } from "./upload-store.ts";
import type { StoredFile } from "./types.ts";

/**
 * OpenAI's Uploads API: a file sent in parts, each its own request (`POST /v1/files` takes the whole file in one,
 * more than a Lambda function URL's 6 MB). Create declares the file (name, purpose, total bytes, MIME type), parts
 * add up to it, complete joins them in the given order into a gateway file; cancel drops them. An upload belongs to
 * the workspace that created it: any other caller gets 404.
 */

/** Room for the multipart framing around a part's bytes. */
const PART_FORM_OVERHEAD = 64 * 1024;

export const uploadHandlers: HandlerMap = {
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

function ownerOf(ctx: RequestContext): ResourceOwner {
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  return resourceOwnerOf(ctx.principal);
}
