import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyFileSecrets } from "../../core/platform/local/key-file-secrets.ts";
import { createLocalStores, type LocalStores } from "../../core/platform/local/local-stores.ts";
import { attachmentDisposition } from "../../core/store/content-disposition.ts";
import { StoreUnavailableError } from "../../core/store/ports.ts";
import { blobsContract } from "./blobs.contract.ts";
import { countersContract } from "./counters.contract.ts";
import { logSinkContract } from "./log-sink.contract.ts";
import { queueContract } from "./queue.contract.ts";
import { recordsContract } from "./records.contract.ts";
import { secretsContract } from "./secrets.contract.ts";

let dataDir: string;
let stores: LocalStores;
let server: Server;

/** Stands in for the local server's `/_blobs/<key>` route, so signed URLs are fetched as on S3. */
function serveSignedBlobs(): Server {
  return createServer(async (request, response) => {
    const url = new URL(request.url!, "http://localhost");
    const key = url.pathname
      .replace(/^\/_blobs\//, "")
      .split("/")
      .map(decodeURIComponent)
      .join("/");
    const filename = url.searchParams.get("filename") ?? undefined;
    const { expires, signature } = Object.fromEntries(url.searchParams);
    if (!stores.blobs.verifyBlobSignature(key, expires, signature, filename)) {
      response.writeHead(403).end();
      return;
    }
    const blob = await stores.blobs.get(key);
    if (!blob) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, {
      "content-length": blob.size,
      ...(blob.contentType ? { "content-type": blob.contentType } : {}),
      ...(filename ? { "content-disposition": attachmentDisposition(filename) } : {}),
    });
    Readable.fromWeb(blob.body as NodeReadableStream<Uint8Array>).pipe(response);
  });
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-local-"));
  server = serveSignedBlobs();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  stores = createLocalStores({ dataDir, publicBaseUrl: `http://127.0.0.1:${port}` });
});

afterAll(async () => {
  await stores?.close();
  server?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("local stores", () => {
  recordsContract(() => stores.records);
  // Request logs: read on this thread, written by the storage thread.
  describe("request-log records (logs.db)", () => recordsContract(() => stores.logSink.records));
  logSinkContract(() => stores);
  countersContract(() => stores.counters);
  blobsContract(() => stores.blobs);
  queueContract(async () => ({ queue: stores.queue, name: `queue-${randomUUID()}` }));
  secretsContract(() => new KeyFileSecrets(join(dataDir, "keys", `${randomUUID()}.key`)));

  describe("local specifics", () => {
    it("creates the key file with mode 0600, keeps data across restarts, answers 503 once closed", async () => {
      const dir = mkdtempSync(join(tmpdir(), "gateway-restart-"));
      try {
        const first = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
        expect(statSync(join(dir, "master.key")).mode & 0o777).toBe(0o600);
        const sealed = await first.secrets.encrypt("kept");
        await first.records.put({ pk: "p", sk: "s", sealed });
        await first.counters.add("c", 3);
        await first.blobs.put("k/v", "blob");
        await first.queue.send("q", "message");
        await first.close();
        await expect(first.records.get("p", "s")).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(first.queue.send("q", 1)).rejects.toBeInstanceOf(StoreUnavailableError);

        const second = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
        const item = await second.records.get("p", "s");
        expect(await second.secrets.decrypt(item?.sealed as string)).toBe("kept");
        expect(await second.counters.get("c")).toBe(3);
        expect((await second.blobs.head("k/v"))?.size).toBe(4);
        expect((await second.queue.receive("q", { max: 1, visibilityTimeoutSeconds: 5 }))[0]?.body).toBe("message");
        await second.close();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("verifies blob URL signatures: tampered, other keys and expired URLs are refused", async () => {
      const key = `sig/${randomUUID()}.txt`;
      await stores.blobs.put(key, "secret");
      const url = new URL(await stores.blobs.signedUrl(key, { expiresInSeconds: 60, filename: "a.txt" }));
      const expires = url.searchParams.get("expires")!;
      const signature = url.searchParams.get("signature")!;
      expect(url.pathname).toBe(`/_blobs/${key}`);
      expect(stores.blobs.verifyBlobSignature(key, expires, signature, "a.txt")).toBe(true);

      const flipped = (signature[0] === "0" ? "1" : "0") + signature.slice(1);
      expect(stores.blobs.verifyBlobSignature(key, expires, flipped, "a.txt")).toBe(false);
      expect(stores.blobs.verifyBlobSignature(`${key}x`, expires, signature, "a.txt")).toBe(false);
      expect(stores.blobs.verifyBlobSignature(key, String(Number(expires) + 1), signature, "a.txt")).toBe(false);
      expect(stores.blobs.verifyBlobSignature(key, expires, signature, "b.txt")).toBe(false);
      expect(stores.blobs.verifyBlobSignature(key, expires, signature.slice(2), "a.txt")).toBe(false);

      const download = await fetch(url);
      expect(download.headers.get("content-disposition")).toBe(`attachment; filename="a.txt"; filename*=UTF-8''a.txt`);
      url.searchParams.set("signature", flipped);
      expect((await fetch(url)).status).toBe(403);

      const expired = new URL(await stores.blobs.signedUrl(key, { expiresInSeconds: -5 }));
      expect(
        stores.blobs.verifyBlobSignature(
          key,
          expired.searchParams.get("expires")!,
          expired.searchParams.get("signature")!,
        ),
      ).toBe(false);
      expect((await fetch(expired)).status).toBe(403);
    });
  });
});
