import type { HttpError } from "../../http/errors.ts";
import type { Blobs } from "../../store/ports.ts";

/**
 * Streams `body` into the blob at `key`, counting bytes: once it passes `limit` the write fails with the error
 * `tooLarge` makes for the size reached, and nothing is kept under the key (unless `keepOnFailure`: a fixed key
 * that may hold an earlier version). Answers the bytes written.
 */
export async function putWithinLimit(
  blobs: Blobs,
  key: string,
  body: ReadableStream<Uint8Array>,
  options: { limit: number; tooLarge: (size: number) => HttpError; contentType: string; keepOnFailure?: boolean },
): Promise<number> {
  let refused: HttpError | undefined;
  let size = 0;
  const counted = body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        size += chunk.byteLength;
        if (size > options.limit) {
          refused = options.tooLarge(size);
          controller.error(refused);
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  // The adapters write atomically (a temporary file renamed, an S3 upload completed): a failed write leaves nothing
  // under the key. The key is deleted anyway, in case an adapter ever does.
  const discard = () => (options.keepOnFailure ? undefined : blobs.delete(key).catch(() => {}));
  try {
    await blobs.put(key, counted, { contentType: options.contentType });
  } catch (error) {
    await discard();
    throw refused ?? error;
  }
  if (refused) {
    await discard();
    throw refused;
  }
  return size;
}
