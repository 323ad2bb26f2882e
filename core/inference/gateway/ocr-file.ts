import { readBounded } from "../../util/read-bounded.ts";
import { resourceOwnerOf } from "../../auth/resource-owner.ts";
import { fileStoreOf, isFileId } from "../../features/files/file-store.ts";
import type { RequestContext } from "../../services.ts";
import { HttpError, badRequest, unauthorized } from "../../http/errors.ts";

/**
 * OCR of a file uploaded to the gateway (`document: {type: "file", file_id: "file-..."}`): a provider cannot
 * read the gateway's file ids, so the file (the caller's workspace's own, else 400) is sent as a base64 data URL,
 * which Mistral OCR and Azure's Mistral OCR both read. Another id (a provider's own file, e.g. one uploaded to
 * Mistral) is passed on as it is.
 */

/** Mistral OCR's own limit on a document (https://docs.mistral.ai/capabilities/document_ai/basic_ocr/). */
export const MAX_OCR_FILE_BYTES = 50 * 1024 * 1024;

/** Content types by file extension, for files uploaded without a useful one. */
const BY_EXTENSION: Readonly<Record<string, string>> = {
  pdf: "application/pdf",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  webp: "image/webp",
  gif: "image/gif",
  avif: "image/avif",
  tif: "image/tiff",
  tiff: "image/tiff",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
};

export async function withGatewayFile(body: Record<string, any>, ctx: RequestContext): Promise<Record<string, any>> {
  const document = body.document;
  if (document?.type !== "file" || typeof document.file_id !== "string" || !isFileId(document.file_id)) return body;
  if (!ctx.principal) throw unauthorized("Missing or invalid API key.");
  const id: string = document.file_id;
  const found = await fileStoreOf(ctx.services).content(resourceOwnerOf(ctx.principal), id);
  if (!found) throw badRequest(`No such File object: ${id}`, "document.file_id", "file_not_found");
  if (found.file.file.bytes > MAX_OCR_FILE_BYTES) {
    await found.body.cancel().catch(() => {});
    throw tooLarge(id);
  }
  const bytes = await readBounded(found.body, MAX_OCR_FILE_BYTES, () => tooLarge(id));
  const filename = found.file.file.filename;
  const contentType = contentTypeOf(found.file.contentType, filename);
  const url = `data:${contentType};base64,${Buffer.from(bytes).toString("base64")}`;
  const { file_id: _id, ...rest } = document;
  const resolved = contentType.startsWith("image/")
    ? { ...rest, type: "image_url", image_url: url }
    : { ...rest, type: "document_url", document_url: url, document_name: filename };
  return { ...body, document: resolved };
}

function contentTypeOf(stored: string, filename: string): string {
  const type = stored.split(";")[0]!.trim().toLowerCase();
  if (type && type !== "application/octet-stream") return type;
  const extension = /\.([a-z0-9]+)$/i.exec(filename)?.[1]?.toLowerCase();
  return (extension && BY_EXTENSION[extension]) || "application/pdf";
}

const tooLarge = (id: string) =>
  new HttpError(400, `The file ${id} is larger than OCR's limit of ${MAX_OCR_FILE_BYTES} bytes.`, {
    param: "document.file_id",
    code: "file_too_large",
  });
