import busboy from "busboy";
import { failOnMalformedForm, feedMultipart, uploadTooLarge } from "../../features/files/multipart.ts";
import { badRequest } from "../../http/errors.ts";
import { UploadedFile } from "../../providers/uploaded-file.ts";

/**
 * Reads a multipart/form-data inference request (image edits and variations, audio transcriptions and
 * translations) into one object: text fields as strings (a repeated name, or one ending in `[]`, as an array
 * under the name without `[]`), file parts as UploadedFile values (arrays likewise). Files are held in memory,
 * bounded by `maxBytes` for the whole body, because a retry or a fallback sends them again. The family's
 * schema validates the object afterwards (numbers arrive as strings there).
 */

/** A form of these routes has a handful of short fields and a few files (gpt-image edits take up to 16 images). */
const LIMITS = { fields: 64, fieldSize: 64 * 1024, files: 20, parts: 84, headerPairs: 50 };

export type FormValue = string | string[] | UploadedFile | UploadedFile[];

export async function readMultipartBody(request: Request, maxBytes: number): Promise<Record<string, FormValue>> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw badRequest(
      `Unsupported content type '${contentType || "(none)"}': send this route's body as multipart/form-data.`,
      null,
      "invalid_content_type",
    );
  }
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > maxBytes) throw uploadTooLarge(maxBytes);
  if (!request.body) throw badRequest("The form is empty.", null, "missing_required_parameter");

  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { "content-type": contentType }, limits: LIMITS, defParamCharset: "utf8" });
  } catch (error) {
    throw badRequest(`Malformed multipart/form-data: ${(error as Error).message}.`, null, "invalid_multipart");
  }
  const form: Record<string, FormValue> = Object.create(null);
  const pendingFiles: Promise<void>[] = [];
  let failure: unknown;
  const failed = new Promise<never>((_, reject) => {
    parser.once("formFailed", reject);
  });
  failed.catch(() => {});
  const fail = (error: unknown) => {
    if (failure !== undefined) return;
    failure = error;
    parser.emit("formFailed", error);
  };
  const closed = new Promise<void>((resolve) => parser.once("close", resolve));

  parser.on("field", (name, value, info) => {
    if (info.valueTruncated) fail(badRequest(`The field '${name}' is too long.`, name, "invalid_value"));
    else add(form, name, value);
  });
  parser.on("file", (name, stream, info) => {
    const chunks: Uint8Array[] = [];
    pendingFiles.push(
      new Promise<void>((resolve, reject) => {
        stream.on("data", (chunk: Uint8Array) => chunks.push(chunk));
        stream.once("error", reject);
        stream.once("end", () => {
          add(
            form,
            name,
            new UploadedFile(info.filename ?? name, info.mimeType || "application/octet-stream", Buffer.concat(chunks)),
          );
          resolve();
        });
      }).catch(fail),
    );
  });
  failOnMalformedForm(parser, fail);

  const reader = request.body.getReader();
  try {
    const fed = feedMultipart(reader, parser, maxBytes);
    fed.catch(fail);
    await Promise.race([fed, failed]);
    await Promise.race([closed, failed]);
    await Promise.race([Promise.all(pendingFiles), failed]);
    if (failure !== undefined) throw failure;
    return form;
  } catch (error) {
    await reader.cancel().catch(() => {});
    parser.destroy();
    throw failure ?? error;
  }
}

/** Adds a form value: a second value under one name, or a name ending in `[]`, makes an array. */
function add(form: Record<string, FormValue>, rawName: string, value: string | UploadedFile): void {
  const listed = rawName.endsWith("[]");
  const name = listed ? rawName.slice(0, -2) : rawName;
  const existing = form[name];
  if (existing === undefined) form[name] = (listed ? [value] : value) as FormValue;
  else if (Array.isArray(existing)) (existing as Array<string | UploadedFile>).push(value);
  else form[name] = [existing, value] as FormValue;
}
