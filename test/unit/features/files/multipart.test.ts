import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type UploadPart, readMultipartUpload } from "../../../../core/features/files/multipart.ts";
import { HttpError } from "../../../../core/http/errors.ts";

const BOUNDARY = "----test-boundary-7MA4YWxkTrZu0gW";

/** A multipart body from parts in the given order, streamed in chunks of `chunk` bytes (split mid-boundary too). */
function formRequest(
  parts: Array<{ name: string; value: string | Uint8Array; filename?: string; type?: string }>,
  options: { chunk?: number; contentType?: string; contentLength?: boolean } = {},
): Request {
  const pieces: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? "" : `; filename="${part.filename}"`}`;
    const type = part.filename === undefined ? "" : `Content-Type: ${part.type ?? "application/octet-stream"}\r\n`;
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n${type}\r\n`));
    pieces.push(Buffer.from(part.value));
    pieces.push(Buffer.from("\r\n"));
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  const bytes = Buffer.concat(pieces);
  const chunk = options.chunk ?? 16 * 1024;
  let offset = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + chunk));
      offset += chunk;
    },
  });
  const headers: Record<string, string> = {
    "content-type": options.contentType ?? `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (options.contentLength) headers["content-length"] = String(bytes.length);
  return new Request("http://gateway.test/v1/files", { method: "POST", headers, body, duplex: "half" } as RequestInit);
}

/** A consumer that reads the file part whole and hashes it (and counts its chunks). */
const hashing = {
  async onFile(part: UploadPart) {
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of part.body) {
      hash.update(chunk);
      size += chunk.byteLength;
    }
    return { sha: hash.digest("hex"), size, filename: part.filename, contentType: part.contentType };
  },
  discard: async () => {},
};

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

describe("readMultipartUpload", () => {
  it("reads the fields and the file in either order", async () => {
    const content = Buffer.from('{"custom_id":"1"}\n');
    for (const order of ["purpose first", "file first"]) {
      const parts = [
        { name: "purpose", value: "batch" },
        { name: "file", value: content, filename: "in.jsonl", type: "application/jsonl" },
        { name: "expires_after[seconds]", value: "3600" },
      ];
      if (order === "file first") parts.reverse();
      const form = await readMultipartUpload(formRequest(parts, { chunk: 7 }), {
        maxBytes: 1024 * 1024,
        fileField: "file",
        ...hashing,
      });
      expect(form.fields).toEqual({ purpose: "batch", "expires_after[seconds]": "3600" });
      expect(form.file).toMatchObject({ filename: "in.jsonl", contentType: "application/jsonl" });
      expect(form.file!.result).toMatchObject({ sha: sha(content), size: content.length });
    }
  });

  it("hands fields read before the file to onFile", async () => {
    const seen: Array<Record<string, string>> = [];
    await readMultipartUpload(
      formRequest([
        { name: "purpose", value: "fine-tune" },
        { name: "file", value: "x", filename: "a" },
      ]),
      {
        maxBytes: 1024,
        fileField: "file",
        onFile: async (part, fields) => {
          seen.push({ ...fields });
          await part.body.cancel();
        },
        discard: async () => {},
      },
    );
    expect(seen).toEqual([{ purpose: "fine-tune" }]);
  });

  it("answers no file when the form has none, and drops file parts of other names", async () => {
    const form = await readMultipartUpload(
      formRequest([
        { name: "purpose", value: "batch" },
        { name: "attachment", value: "ignored", filename: "other.txt" },
      ]),
      { maxBytes: 1024, fileField: "file", ...hashing },
    );
    expect(form.file).toBeUndefined();
    expect(form.fields).toEqual({ purpose: "batch" });
  });

  it("keeps UTF-8 file names", async () => {
    const form = await readMultipartUpload(formRequest([{ name: "file", value: "x", filename: "données-ü.jsonl" }]), {
      maxBytes: 1024,
      fileField: "file",
      ...hashing,
    });
    expect(form.file!.filename).toBe("données-ü.jsonl");
  });

  it("refuses other content types and malformed forms with 400", async () => {
    const json = new Request("http://gateway.test/v1/files", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await expect(readMultipartUpload(json, { maxBytes: 1024, fileField: "file", ...hashing })).rejects.toMatchObject({
      status: 400,
      code: "invalid_content_type",
    });
    const noBoundary = formRequest([{ name: "purpose", value: "batch" }], { contentType: "multipart/form-data; x=1" });
    await expect(
      readMultipartUpload(noBoundary, { maxBytes: 1024, fileField: "file", ...hashing }),
    ).rejects.toMatchObject({ status: 400 });
    const cut = new Request("http://gateway.test/v1/files", {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nhalf a fi`,
    });
    await expect(readMultipartUpload(cut, { maxBytes: 1024, fileField: "file", ...hashing })).rejects.toMatchObject({
      status: 400,
      code: "invalid_multipart",
    });
  });

  it("refuses a body over the limit with 413, by its declared length or as it streams", async () => {
    const parts = [
      { name: "purpose", value: "batch" },
      { name: "file", value: randomBytes(4096), filename: "big" },
    ];
    let started = 0;
    const counting = {
      ...hashing,
      onFile(part: UploadPart) {
        started++;
        return hashing.onFile(part);
      },
    };
    const declared = formRequest(parts, { contentLength: true });
    await expect(
      readMultipartUpload(declared, { maxBytes: 4000, fileField: "file", ...counting }),
    ).rejects.toMatchObject({
      status: 413,
      code: "request_too_large",
    });
    expect(started).toBe(0);
    const streamed = formRequest(parts, { chunk: 500 });
    const error = await readMultipartUpload(streamed, { maxBytes: 4000, fileField: "file", ...counting }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 413, code: "request_too_large" });
  });

  it("ends with the consumer's error, and undoes a finished consumer's work when a later part fails", async () => {
    const refusal = new HttpError(413, "too big", { code: "file_too_large" });
    await expect(
      readMultipartUpload(
        formRequest([{ name: "file", value: randomBytes(100_000), filename: "f" }], { chunk: 1000 }),
        {
          maxBytes: 1024 * 1024,
          fileField: "file",
          onFile: async (part) => {
            const reader = part.body.getReader();
            await reader.read();
            throw refusal;
          },
          discard: async () => {},
        },
      ),
    ).rejects.toBe(refusal);

    const discarded: string[] = [];
    const truncated = new Request("http://gateway.test/v1/files", {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body:
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nwhole\r\n` +
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbat`,
    });
    await expect(
      readMultipartUpload(truncated, {
        maxBytes: 1024,
        fileField: "file",
        onFile: async (part) => {
          await new Response(part.body).text();
          return "staged-1";
        },
        discard: async (result) => {
          discarded.push(result);
        },
      }),
    ).rejects.toMatchObject({ status: 400 });
    expect(discarded).toEqual(["staged-1"]);
  });

  it("streams a large file intact while holding only a few chunks", async () => {
    const size = 48 * 1024 * 1024;
    const hash = createHash("sha256");
    let sent = 0;
    let bufferedMax = 0;
    let consumed = 0;
    const head = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nbatch\r\n--${BOUNDARY}\r\n` +
        `Content-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    );
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    let stage = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (stage === 0) {
          stage = 1;
          return controller.enqueue(head);
        }
        if (sent < size) {
          const chunk = randomBytes(Math.min(256 * 1024, size - sent));
          hash.update(chunk);
          sent += chunk.length;
          bufferedMax = Math.max(bufferedMax, sent - consumed);
          return controller.enqueue(chunk);
        }
        controller.enqueue(tail);
        controller.close();
      },
    });
    const request = new Request("http://gateway.test/v1/files", {
      method: "POST",
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body,
      duplex: "half",
    } as RequestInit);
    const form = await readMultipartUpload(request, {
      maxBytes: size * 2,
      fileField: "file",
      async onFile(part) {
        const received = createHash("sha256");
        for await (const chunk of part.body) {
          received.update(chunk);
          consumed += chunk.byteLength;
          // A slow consumer: the producer must wait for it rather than buffer the file.
          if (consumed % (4 * 1024 * 1024) < chunk.byteLength) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        return received.digest("hex");
      },
      discard: async () => {},
    });
    expect(form.file!.result).toBe(hash.digest("hex"));
    expect(consumed).toBe(size);
    // Backpressure: never more than a few MB between what was sent and what the consumer read.
    expect(bufferedMax).toBeLessThan(8 * 1024 * 1024);
  });
});
