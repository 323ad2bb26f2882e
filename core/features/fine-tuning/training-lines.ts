import { Readable } from "node:stream";
import { fileStoreOf } from "../files/file-store.ts";
import type { StoredFile } from "../files/types.ts";
import { UpstreamError } from "../../providers/types.ts";
import type { Services } from "../../services.ts";

/**
 * A training (or validation) file rewritten line by line into a provider's dataset format, read from the
 * workspace's file as it streams, never held whole. `measure` is a first pass that checks every line and counts
 * the bytes (S3 wants Content-Length; a refused line must refuse the job before anything is uploaded); `stream`
 * is the second pass, the rewritten JSONL.
 */

/** One line's rewrite; throws UpstreamError (400) when the line cannot be used. */
export type LineRewrite = (line: Record<string, any>, number: number) => Record<string, unknown>;

async function* jsonLinesOf(services: Services, stored: StoredFile, param: string): AsyncGenerator<[any, number]> {
  const content = await fileStoreOf(services).content(stored.owner, stored.file.id);
  if (!content) throw new UpstreamError(400, `File '${stored.file.id}' has no content.`, { param });
  const decoder = new TextDecoder();
  let pending = "";
  let number = 0;
  const parse = (text: string): [any, number] => {
    try {
      const value = JSON.parse(text);
      if (value && typeof value === "object" && !Array.isArray(value)) return [value, number];
    } catch {}
    throw new UpstreamError(400, `Invalid '${param}': line ${number} is not a JSON object.`, {
      param,
      code: "invalid_training_file",
    });
  };
  for await (const chunk of content.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf("\n");
    while (newline !== -1) {
      const text = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      number++;
      if (text.trim()) yield parse(text);
      newline = pending.indexOf("\n");
    }
  }
  pending += decoder.decode();
  number++;
  if (pending.trim()) yield parse(pending);
}

export interface RewrittenFile {
  /** First pass: every line checked; the rewritten file's length in bytes and its number of examples. */
  measure(): Promise<{ bytes: number; lines: number }>;
  /** Second pass: the rewritten JSONL. */
  stream(): Readable;
}

export function rewrittenFile(
  services: Services,
  stored: StoredFile,
  param: string,
  rewrite: LineRewrite,
): RewrittenFile {
  const encoder = new TextEncoder();
  async function* rewritten(): AsyncGenerator<Uint8Array> {
    for await (const [line, number] of jsonLinesOf(services, stored, param)) {
      yield encoder.encode(`${JSON.stringify(rewrite(line, number))}\n`);
    }
  }
  return {
    async measure() {
      let bytes = 0;
      let lines = 0;
      for await (const chunk of rewritten()) {
        bytes += chunk.byteLength;
        lines++;
      }
      if (lines === 0) {
        throw new UpstreamError(400, `Invalid '${param}': the file has no examples.`, {
          param,
          code: "invalid_training_file",
        });
      }
      return { bytes, lines };
    },
    stream: () => Readable.from(rewritten()),
  };
}

/** The 400 a rewrite throws for a line it cannot use. */
export function invalidLine(param: string, number: number, why: string): UpstreamError {
  return new UpstreamError(400, `Invalid '${param}': line ${number} ${why}`, {
    param,
    code: "invalid_training_file",
  });
}
