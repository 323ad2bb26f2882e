import { createHash, randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Blobs } from "../../core/store/ports.ts";

const blobPrefix = (name: string) => `test/${randomUUID()}/${name}`;

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

function streamOf(...chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

export function blobsContract(getBlobs: () => Blobs) {
  describe("Blobs", () => {
    it("puts strings, bytes and streams and reads them back as streams", async () => {
      const blobs = getBlobs();
      const base = blobPrefix("kinds");

      expect(await blobs.put(`${base}/text.txt`, "héllo", { contentType: "text/plain" })).toEqual({ size: 6 });
      expect(await blobs.put(`${base}/bytes.bin`, new Uint8Array([0, 1, 2, 255]))).toEqual({ size: 4 });
      const lines = Array.from({ length: 200 }, (_, i) => `{"line":${i}}\n`);
      const jsonl = lines.join("");
      expect(await blobs.put(`${base}/stream.jsonl`, streamOf(...lines), { contentType: "application/jsonl" })).toEqual(
        { size: jsonl.length },
      );

      const textBlob = await blobs.get(`${base}/text.txt`);
      expect(textBlob).toMatchObject({ key: `${base}/text.txt`, size: 6, contentType: "text/plain" });
      expect(textBlob?.lastModified).toBeInstanceOf(Date);
      expect(await text(textBlob!.body)).toBe("héllo");

      const bytes = await blobs.get(`${base}/bytes.bin`);
      expect(new Uint8Array(await new Response(bytes!.body).arrayBuffer())).toEqual(new Uint8Array([0, 1, 2, 255]));

      const stream = await blobs.get(`${base}/stream.jsonl`);
      expect(stream?.size).toBe(jsonl.length);
      expect(await text(stream!.body)).toBe(jsonl);

      expect(await blobs.get(`${base}/missing`)).toBeUndefined();
    });

    it("streams a blob larger than one upload part (9 MiB) both ways", async () => {
      const blobs = getBlobs();
      const key = `${blobPrefix("large")}/big.bin`;
      const chunk = new Uint8Array(64 * 1024).map((_, i) => i % 251);
      const chunks = 144; // 9 MiB
      let remaining = chunks;
      const upload = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(chunk.slice());
          if (--remaining === 0) controller.close();
        },
      });
      expect(await blobs.put(key, upload, { contentType: "application/octet-stream" })).toEqual({
        size: chunk.byteLength * chunks,
      });
      const blob = await blobs.get(key);
      expect(blob).toMatchObject({ size: chunk.byteLength * chunks, contentType: "application/octet-stream" });
      const expected = createHash("sha256");
      for (let i = 0; i < chunks; i++) expected.update(chunk);
      const actual = createHash("sha256");
      let size = 0;
      for (const reader = blob!.body.getReader(); ; ) {
        const { done, value } = await reader.read();
        if (done) break;
        actual.update(value);
        size += value.byteLength;
      }
      expect(size).toBe(chunk.byteLength * chunks);
      expect(actual.digest("hex")).toBe(expected.digest("hex"));
      await blobs.delete(key);
    });

    it("heads, overwrites and deletes", async () => {
      const blobs = getBlobs();
      const key = `${blobPrefix("head")}/a.json`;
      expect(await blobs.head(key)).toBeUndefined();
      await blobs.put(key, "{}", { contentType: "application/json" });
      expect(await blobs.head(key)).toMatchObject({ key, size: 2, contentType: "application/json" });

      await blobs.put(key, "[1,2,3]", { contentType: "text/plain" });
      expect(await blobs.head(key)).toMatchObject({ size: 7, contentType: "text/plain" });
      expect(await text((await blobs.get(key))!.body)).toBe("[1,2,3]");

      await blobs.delete(key);
      expect(await blobs.head(key)).toBeUndefined();
      expect(await blobs.get(key)).toBeUndefined();
      await blobs.delete(key); // deleting an absent blob is fine
    });

    it("keeps a key and a longer key under it apart", async () => {
      const blobs = getBlobs();
      const base = blobPrefix("nesting");
      await blobs.put(`${base}/a`, "file");
      await blobs.put(`${base}/a/b`, "nested");
      expect(await text((await blobs.get(`${base}/a`))!.body)).toBe("file");
      expect(await text((await blobs.get(`${base}/a/b`))!.body)).toBe("nested");
    });

    it("lists by prefix in key order, page by page", async () => {
      const blobs = getBlobs();
      const base = blobPrefix("list");
      const keys = Array.from({ length: 12 }, (_, i) => `${base}/f${String(i).padStart(2, "0")}`);
      await Promise.all([...keys].reverse().map((key) => blobs.put(key, key)));
      await blobs.put(`${base}/sub/deep`, "deep");
      await blobs.put(`${base}x/sibling`, "not under base/");

      const pages: string[][] = [];
      let cursor: string | undefined;
      do {
        const page = await blobs.list(`${base}/f`, { limit: 5, cursor });
        pages.push(page.items.map((item) => item.key));
        cursor = page.cursor;
      } while (cursor);
      expect(pages.map((page) => page.length)).toEqual([5, 5, 2]);
      expect(pages.flat()).toEqual(keys);

      const all = await blobs.list(`${base}/`);
      expect(all.items.map((item) => item.key)).toEqual([...keys, `${base}/sub/deep`]);
      expect(all.cursor).toBeUndefined();
      expect(all.items[0]).toMatchObject({ key: keys[0], size: keys[0].length });
      expect(all.items[0].lastModified).toBeInstanceOf(Date);

      expect((await blobs.list(`${base}/nothing-here`)).items).toEqual([]);
    });

    it("refuses keys that are empty, absolute or walk up (on every platform alike)", async () => {
      const blobs = getBlobs();
      for (const key of ["", "../escape", "a/../../escape", "/etc/passwd", "a//b", "./a", "a/", "a/\0"]) {
        await expect(blobs.put(key, "x")).rejects.toThrow(RangeError);
        await expect(blobs.get(key)).rejects.toThrow(RangeError);
        await expect(blobs.signedUrl(key, { expiresInSeconds: 60 })).rejects.toThrow(RangeError);
      }
    });

    it("signs URLs that download the blob", async () => {
      const blobs = getBlobs();
      const key = `${blobPrefix("signed")}/report file.csv`;
      await blobs.put(key, "a,b\n1,2\n", { contentType: "text/csv" });

      const url = await blobs.signedUrl(key, { expiresInSeconds: 60 });
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe("a,b\n1,2\n");

      const named = await blobs.signedUrl(key, { expiresInSeconds: 60, filename: "résumé.csv" });
      const download = await fetch(named);
      expect(download.status).toBe(200);
      expect(await download.text()).toBe("a,b\n1,2\n");
    });
  });
}
