import type { UploadedFile } from "../../providers/uploaded-file.ts";

/**
 * The playing time of an uploaded audio file in seconds (per-second pricing when the provider does not report
 * it), read from the file's own headers by music-metadata (mp3, mp4/m4a, wav, flac, ogg, webm, ...); undefined
 * when the format hides it. Loaded on first use: only the audio family needs it.
 */
export async function audioSeconds(file: UploadedFile): Promise<number | undefined> {
  try {
    const { parseBuffer } = await import("music-metadata");
    const metadata = await parseBuffer(file.bytes, { mimeType: file.contentType, size: file.size }, { duration: true });
    const seconds = metadata.format.duration;
    return typeof seconds === "number" && Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined;
  } catch {
    return undefined;
  }
}
