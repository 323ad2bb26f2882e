import type { Readable } from "node:stream";
import busboy from "busboy";
import { HttpError, badRequest } from "../../http/errors.ts";

/**
 * A streaming reader of multipart/form-data uploads (`POST /v1/files`): text fields are collected, the one file
 * part is handed over as a stream while it arrives (busboy parses; backpressure runs from the consumer of the
 * file's stream back to the request body), so an upload of any size holds only a few chunks in memory.
 * Fields may come before or after the file: the caller checks them once the whole form is read.
 */

export interface UploadPart {
  filename: string;
  contentType: string;
  body: ReadableStream<Uint8Array>;
}

export interface MultipartOptions<T> {
  /** The whole request body's limit (GATEWAY_MAX_UPLOAD_BYTES): past it the upload answers 413. */
  maxBytes: number;
  /** The name of the file part (OpenAI: `file`); other file parts are read past and dropped. */
  fileField: string;
  /**
   * Consumes the file part's stream (stores it); a rejection ends the upload with that error. `fields` holds the
   * fields read so far (those before the file), so a bad one can be refused before the bytes are stored.
   */
  onFile(part: UploadPart, fields: Readonly<Record<string, string>>): Promise<T>;
  /** Undoes onFile's work when the form fails after it finished (a later part was malformed). */
  discard(result: T): Promise<void>;
}

export interface MultipartUpload<T> {
  fields: Record<string, string>;
  /** Absent when the form had no part named `fileField`. */
  file?: { filename: string; contentType: string; result: T };
}

/** Bounds on what is not the file: a form of OpenAI's upload has a handful of short fields. */
const LIMITS = { fields: 50, fieldSize: 64 * 1024, files: 5, parts: 60, headerPairs: 50 };

export async function readMultipartUpload<T>(
  request: Request,
  options: MultipartOptions<T>,
): Promise<MultipartUpload<T>> {
  const contentType = request.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;/i.test(contentType)) {
    throw badRequest(
      `Unsupported content type '${contentType || "(none)"}': upload files as multipart/form-data.`,
      null,
      "invalid_content_type",
    );
  }
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (declared > options.maxBytes) throw uploadTooLarge(options.maxBytes);
  if (!request.body)
    throw badRequest("The form is empty: the 'file' part is required.", "file", "missing_required_parameter");

  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { "content-type": contentType }, limits: LIMITS, defParamCharset: "utf8" });
  } catch (error) {
    throw badRequest(`Malformed multipart/form-data: ${(error as Error).message}.`, null, "invalid_multipart");
  }

  const fields: Record<string, string> = {};
  let file: { filename: string; contentType: string; pending: Promise<T> } | undefined;
  let fileStream: Readable | undefined;
  let failure: unknown;
  let failed!: (error: unknown) => void;
  const failedPromise = new Promise<never>((_, reject) => {
    failed = reject;
  });
  failedPromise.catch(() => {});
  const fail = (error: unknown) => {
    if (failure !== undefined) return;
    failure = error;
    fileStream?.destroy(error instanceof Error ? error : new Error(String(error)));
    failed(error);
  };
  const closed = new Promise<void>((resolve) => parser.once("close", resolve));

  parser.on("field", (name, value, info) => {
    if (info.valueTruncated) fail(badRequest(`The field '${name}' is too long.`, name, "invalid_value"));
    else fields[name] = value;
  });
  parser.on("file", (name, stream, info) => {
    if (name !== options.fileField || file !== undefined) {
      stream.resume();
      return;
    }
    fileStream = stream;
    // Its failure reaches the consumer through the stream's reads; the event itself must not go unheard.
    stream.on("error", () => {});
    const part = {
      filename: info.filename ?? "",
      contentType: info.mimeType || "application/octet-stream",
      body: webStreamOf(stream),
    };
    // Called inside a promise: a throw in onFile is a rejection like any other.
    const pending = Promise.resolve().then(() => options.onFile(part, fields));
    pending.catch(fail);
    file = { filename: part.filename, contentType: part.contentType, pending };
  });
  failOnMalformedForm(parser, fail);

  const reader = request.body.getReader();
  try {
    const fed = feedMultipart(reader, parser, options.maxBytes);
    fed.catch(fail);
    await Promise.race([fed, failedPromise]);
    await Promise.race([closed, failedPromise]);
    const result = file ? await Promise.race([file.pending, failedPromise]) : undefined;
    return {
      fields,
      ...(file && { file: { filename: file.filename, contentType: file.contentType, result: result as T } }),
    };
  } catch (error) {
    fail(error);
    await reader.cancel().catch(() => {});
    parser.destroy();
    // Let the consumer finish failing (it removes what it began to store), or undo what it finished.
    if (file) {
      const settled = await file.pending.then(
        (result) => ({ result }),
        () => undefined,
      );
      if (settled) await options.discard(settled.result).catch(() => {});
    }
    throw failure;
  }
}

/** Ends the form with a 400 when busboy finds it malformed or over its part limits. */
export function failOnMalformedForm(parser: busboy.Busboy, fail: (error: unknown) => void): void {
  const tooMany = () => fail(badRequest("The form has too many parts.", null, "invalid_multipart"));
  parser.on("partsLimit", tooMany);
  parser.on("filesLimit", tooMany);
  parser.on("fieldsLimit", tooMany);
  parser.on("error", (error: Error) =>
    fail(badRequest(`Malformed multipart/form-data: ${error.message}.`, null, "invalid_multipart")),
  );
}

/** Writes the request body into the parser, counting bytes, waiting whenever the parser asks to. */
export async function feedMultipart(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  parser: busboy.Busboy,
  limit: number,
) {
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) throw uploadTooLarge(limit);
    if (!parser.write(value)) await drained(parser);
  }
  parser.end();
}

/** Resolves when the parser takes writes again, or is gone (destroyed after a failure). */
function drained(parser: busboy.Busboy): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      parser.off("drain", done);
      parser.off("close", done);
      resolve();
    };
    parser.on("drain", done);
    parser.on("close", done);
  });
}

/**
 * A Node stream as a web stream read on demand (pull), so the reader's pace reaches busboy and the request. A
 * reader that cancels gets no more: the rest of the part is read past, so the form's later parts still arrive.
 */
function webStreamOf(stream: Readable): ReadableStream<Uint8Array> {
  const chunks = stream.iterator({ destroyOnReturn: false }) as AsyncIterator<Uint8Array>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await chunks.return?.();
        stream.resume();
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The error for an answer sent before the whole body was read (refused early, or cut off): the connection is closed
 * after it, so the unread rest of the body is never taken for the client's next request on a kept-alive connection.
 */
export function closingConnection(error: unknown): unknown {
  if (!(error instanceof HttpError)) return error;
  return new HttpError(error.status, error.message, {
    type: error.type,
    param: error.param,
    code: error.code,
    headers: { ...error.headers, connection: "close" },
  });
}

export function uploadTooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body is larger than the limit of ${limit} bytes (GATEWAY_MAX_UPLOAD_BYTES).`, {
    code: "request_too_large",
  });
}
