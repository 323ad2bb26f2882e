import * as z from "zod/mini";
import { int } from "../../http/zod-mini.ts";
import { type FilePurpose, UPLOADABLE_PURPOSES } from "./types.ts";

/** Request bodies of OpenAI's Uploads API (core/routes/handlers/files.ts); zod/mini, as every data-plane schema. */

/** `POST /v1/uploads`: the file's name, purpose, total size and MIME type. */
export const createUploadSchema = z.object({
  filename: z.string().check(z.minLength(1), z.maxLength(1024)),
  purpose: z.enum(UPLOADABLE_PURPOSES as unknown as [FilePurpose, ...FilePurpose[]]),
  bytes: int(z.gte(1)),
  mime_type: z.string().check(z.minLength(1), z.maxLength(255), z.regex(/^[^\r\n]*$/, "expected a MIME type")),
});

/** `POST /v1/uploads/:id/complete`: the parts in the file's order, and optionally the whole file's MD5 (hex). */
export const completeUploadSchema = z.object({
  part_ids: z.array(z.string().check(z.maxLength(64))).check(z.minLength(1), z.maxLength(10_000)),
  md5: z.optional(z.string().check(z.regex(/^[0-9a-fA-F]{32}$/, "expected an MD5 digest in hex"))),
});
