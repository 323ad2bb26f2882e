import * as z from "zod/mini";
import { resourceOwnerOf } from "../../auth/resource-owner.ts";
import { gatewayHeadersOf } from "../../inference/gateway/plan.ts";
import { singleTargetOf } from "../../inference/gateway/deferred-request.ts";
import type { RequestContext } from "../../services.ts";
import { badRequest, unauthorized } from "../../http/errors.ts";
import { json, validate } from "../../http/json.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { type StagedFile, fileStoreOf } from "./file-store.ts";
import { type MultipartUpload, closingConnection, readMultipartUpload } from "./multipart.ts";
import { ensureProviderFile, hasFilesApi } from "./provider-files.ts";
import { type FilePurpose, UPLOADABLE_PURPOSES } from "./types.ts";
import "../../http/zod-mini.ts";

/** `expires_after[seconds]` bounds (OpenAI's: one hour to 30 days). */
const MIN_EXPIRY_SECONDS = 3600;
const MAX_EXPIRY_SECONDS = 2_592_000;

const purposeSchema = z.enum(UPLOADABLE_PURPOSES as unknown as [FilePurpose, ...FilePurpose[]]);

/** The form's text fields (OpenAI's upload: `purpose`, optional `expires_after[anchor]` + `expires_after[seconds]`). */
const uploadFields = z
  .object({
    purpose: purposeSchema,
    "expires_after[anchor]": z.optional(z.literal("created_at")),
    "expires_after[seconds]": z.optional(
      z.pipe(
        z.string().check(z.regex(/^\d{1,10}$/, "expected an integer number of seconds")),
        z.pipe(z.transform(Number), z.number().check(z.gte(MIN_EXPIRY_SECONDS), z.lte(MAX_EXPIRY_SECONDS))),
      ),
    ),
  })
  .check(
    z.refine(
      (fields) => (fields["expires_after[anchor]"] === undefined) === (fields["expires_after[seconds]"] === undefined),
      {
        message: "expires_after needs both 'anchor' (created_at) and 'seconds'.",
        path: ["expires_after"],
      },
    ),
  );

/**
 * `POST /v1/files` (spec 2.7): a multipart upload of `file` with its `purpose`, streamed into Blobs as it arrives.
 * When the request names a provider with a Files API the gateway uses (x-gateway-provider with credentials, a saved
 * provider, a config of one target), the file is also uploaded there and the two ids linked, so a native batch or
 * fine-tune can use it; a refusal there answers the provider's error and keeps no file. Naming another provider
 * (Anthropic, most OpenAI-compatible ones) keeps the file in the gateway only. The answer is the gateway's File object.
 */
export async function uploadFile(request: Request, ctx: RequestContext): Promise<Response> {
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  const owner = resourceOwnerOf(ctx.principal);
  const store = fileStoreOf(ctx.services);
  const maxBytes = ctx.services.settings.GATEWAY_MAX_UPLOAD_BYTES;
  let form: MultipartUpload<StagedFile>;
  let target: ProviderTarget | undefined;
  try {
    // Before the body is read: an unknown saved provider or a blocked inline config is refused without the upload.
    target = await namedProviderOf(request, ctx);
    form = await readMultipartUpload(request, {
      maxBytes,
      fileField: "file",
      onFile(part, fieldsSoFar) {
        if (fieldsSoFar.purpose !== undefined) validate(z.object({ purpose: purposeSchema }), fieldsSoFar);
        return store.stage(owner, { body: part.body, contentType: part.contentType, maxBytes });
      },
      discard: (staged) => store.discard(staged),
    });
  } catch (error) {
    throw closingConnection(error);
  }
  const staged = form.file?.result;
  let fields: z.infer<typeof uploadFields>;
  try {
    fields = validate(uploadFields, form.fields);
    if (!form.file) throw badRequest("Missing required parameter: 'file'.", "file", "missing_required_parameter");
  } catch (error) {
    if (staged) await store.discard(staged);
    throw error;
  }
  const stored = await store.commit(staged!, {
    filename: form.file.filename || "file",
    purpose: fields.purpose,
    expiresInSeconds: fields["expires_after[seconds]"],
  });
  if (target && hasFilesApi(target.provider)) {
    try {
      await ensureProviderFile(ctx.services, stored, target, ctx.signal);
    } catch (error) {
      await store.delete(owner, stored.file.id).catch(() => {});
      throw error;
    }
  }
  return json(stored.file);
}

/**
 * The provider the request itself names (x-gateway-provider, a virtual key or x-gateway-config) when that routing
 * is one target; undefined when it names none (a default config is not a choice made for this file) or several
 * (the file is copied later to whichever target a batch or fine-tune uses).
 */
export async function namedProviderOf(request: Request, ctx: RequestContext): Promise<ProviderTarget | undefined> {
  const gateway = gatewayHeadersOf(request, ctx);
  if (gateway.provider === undefined && gateway.virtualKey === undefined && gateway.config === undefined) {
    return undefined;
  }
  return singleTargetOf(request, ctx);
}
