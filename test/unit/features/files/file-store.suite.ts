import { createHash, randomBytes, randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { ResourceOwner } from "../../../../core/auth/resource-owner.ts";
import { FILES_BLOB_PREFIX, RecordFileStore } from "../../../../core/features/files/file-store.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import type { Stores } from "../../../../core/store/ports.ts";

/** The file store's behaviour on one platform's stores (local SQLite + folder, or DynamoDB + S3 emulators). */
export function fileStoreSuite(stores: () => Stores): void {
  const MAX = 256 * 1024;
  const store = (now?: () => number) =>
    new RecordFileStore({ records: stores().records, blobs: stores().blobs, maxBytes: MAX, now });
  const newOwner = (organisationId = `org_${randomUUID().slice(0, 8)}`): ResourceOwner => ({
    organisationId,
    workspaceId: `ws_${randomUUID().slice(0, 8)}`,
  });
  const text = async (body: ReadableStream<Uint8Array>) => new Response(body).text();
  const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
  /** A stream of `total` random bytes in chunks of `chunk`, and their hash. */
  function randomStream(total: number, chunk = 64 * 1024) {
    const hash = createHash("sha256");
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        const bytes = randomBytes(Math.min(chunk, total - sent));
        hash.update(bytes);
        sent += bytes.length;
        controller.enqueue(bytes);
      },
    });
    return { body, digest: () => hash.digest("hex") };
  }
  async function blobsOf(owner: ResourceOwner) {
    const prefix = `${FILES_BLOB_PREFIX}${owner.organisationId}/`;
    return (await stores().blobs.list(prefix)).items.map((blob) => blob.key);
  }

  it("creates a file from a stream and reads it back: File object, record and bytes", async () => {
    const owner = newOwner();
    const { body, digest } = randomStream(200 * 1024, 7000);
    const before = Math.floor(Date.now() / 1000);
    const stored = await store().create(owner, {
      filename: "input.jsonl",
      purpose: "batch",
      contentType: "application/jsonl",
      body,
    });
    expect(stored.file).toEqual({
      id: expect.stringMatching(/^file-[0-9a-z]{26}$/),
      object: "file",
      bytes: 200 * 1024,
      created_at: expect.any(Number),
      expires_at: null,
      filename: "input.jsonl",
      purpose: "batch",
      status: "processed",
      status_details: null,
    });
    expect(stored.file.created_at).toBeGreaterThanOrEqual(before);
    const got = await store().get(owner, stored.file.id);
    expect(got).toEqual({ ...stored, providerFiles: {} });
    const content = await store().content(owner, stored.file.id);
    const bytes = new Uint8Array(await new Response(content!.body).arrayBuffer());
    expect(sha(bytes)).toBe(digest());
    expect(content!.file.contentType).toBe("application/jsonl");
  });

  it("takes strings and byte arrays too", async () => {
    const owner = newOwner();
    const fromString = await store().create(owner, { filename: "é.txt", purpose: "user_data", body: "héllo" });
    expect(fromString.file.bytes).toBe(6);
    expect(fromString.contentType).toBe("application/octet-stream");
    const fromBytes = await store().create(owner, { filename: "b", purpose: "vision", body: new Uint8Array([1, 2]) });
    expect(fromBytes.file.bytes).toBe(2);
    expect(await text((await store().content(owner, fromString.file.id))!.body)).toBe("héllo");
  });

  it("lists by creation with purpose, order, limit and after", async () => {
    const owner = newOwner();
    let clock = Date.now();
    const tick = () => (clock += 1000);
    const purposes = ["batch", "fine-tune", "batch", "batch", "vision", "batch"] as const;
    const ids: string[] = [];
    for (const purpose of purposes) {
      ids.push((await store(tick).create(owner, { filename: `${purpose}.jsonl`, purpose, body: "{}" })).file.id);
    }
    // A fixed id sorts by its creation, not by its spelling.
    const fixed = await store(tick).create(owner, {
      id: "file-batch-output-aaa",
      filename: "out.jsonl",
      purpose: "batch_output",
      body: "{}",
    });
    ids.push(fixed.file.id);
    const list = (query: Partial<Parameters<RecordFileStore["list"]>[1]>) =>
      store().list(owner, { limit: 10_000, order: "desc", ...query });

    const all = await list({});
    expect(all.items.map((stored) => stored.file.id)).toEqual([...ids].reverse());
    expect(all.hasMore).toBe(false);
    expect((await list({ order: "asc" })).items.map((stored) => stored.file.id)).toEqual(ids);

    const batches = ids.filter((_, i) => purposes[i] === "batch");
    expect((await list({ purpose: "batch", order: "asc" })).items.map((stored) => stored.file.id)).toEqual(batches);

    const firstTwo = await list({ purpose: "batch", order: "asc", limit: 2 });
    expect(firstTwo.items.map((stored) => stored.file.id)).toEqual(batches.slice(0, 2));
    expect(firstTwo.hasMore).toBe(true);
    const rest = await list({ purpose: "batch", order: "asc", limit: 2, after: batches[1] });
    expect(rest.items.map((stored) => stored.file.id)).toEqual(batches.slice(2, 4));
    expect(rest.hasMore).toBe(false);

    const newest = await list({ limit: 3 });
    expect(newest.items.map((stored) => stored.file.id)).toEqual([ids[6], ids[5], ids[4]]);
    expect(newest.hasMore).toBe(true);
    const older = await list({ limit: 3, after: ids[4] });
    expect(older.items.map((stored) => stored.file.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect((await list({ limit: 3, after: ids[1] })).items.map((stored) => stored.file.id)).toEqual([ids[0]]);

    // A cursor file deleted since still places the page (by the time in its id).
    await store().delete(owner, ids[3]!);
    expect((await list({ limit: 2, after: ids[3] })).items.map((stored) => stored.file.id)).toEqual([ids[2], ids[1]]);
    expect((await list({ after: "not-a-file" })).items).toEqual([]);
  });

  it("deletes the record and the blob", async () => {
    const owner = newOwner();
    const stored = await store().create(owner, { filename: "a", purpose: "batch", body: "bytes" });
    expect(await blobsOf(owner)).toEqual([stored.blobKey]);
    expect(await store().delete(owner, stored.file.id)).toBe(true);
    expect(await store().get(owner, stored.file.id)).toBeUndefined();
    expect(await store().content(owner, stored.file.id)).toBeUndefined();
    expect(await blobsOf(owner)).toEqual([]);
    expect(await store().delete(owner, stored.file.id)).toBe(false);
  });

  it("expires files at expires_at (the record's ttl)", async () => {
    const owner = newOwner();
    const twoHoursAgo = () => Date.now() - 2 * 3600_000;
    const expired = await store(twoHoursAgo).create(owner, {
      filename: "old",
      purpose: "batch",
      body: "x",
      expiresInSeconds: 3600,
    });
    expect(expired.file.expires_at).toBe(expired.file.created_at + 3600);
    const live = await store().create(owner, { filename: "new", purpose: "batch", body: "y", expiresInSeconds: 3600 });
    expect(await store().get(owner, expired.file.id)).toBeUndefined();
    expect(await store().content(owner, expired.file.id)).toBeUndefined();
    expect(await store().get(owner, live.file.id)).toBeDefined();
    const listed = await store().list(owner, { limit: 100, order: "desc" });
    expect(listed.items.map((stored) => stored.file.id)).toEqual([live.file.id]);
  });

  it("refuses a body over the limit with 413 file_too_large and keeps nothing", async () => {
    const owner = newOwner();
    const { body } = randomStream(MAX + 1, 10_000);
    const error = await store()
      .create(owner, { filename: "big", purpose: "batch", body })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 413, code: "file_too_large" });
    await expect(
      store().create(owner, { filename: "big", purpose: "batch", body: new Uint8Array(11), maxBytes: 10 }),
    ).rejects.toMatchObject({ status: 413, code: "file_too_large" });
    expect((await store().list(owner, { limit: 100, order: "desc" })).items).toEqual([]);
    expect(await blobsOf(owner)).toEqual([]);
    // Exactly the limit is fine.
    const exact = await store().create(owner, { filename: "ok", purpose: "batch", body: randomStream(MAX).body });
    expect(exact.file.bytes).toBe(MAX);
  });

  it("replaces a file created again under a fixed id", async () => {
    const owner = newOwner();
    const id = `file-batch-${randomUUID()}-output`;
    await store().create(owner, { id, filename: "out.jsonl", purpose: "batch_output", body: "first\n" });
    const second = await store().create(owner, { id, filename: "out.jsonl", purpose: "batch_output", body: "two\n" });
    expect(second.file.id).toBe(id);
    expect(second.file.bytes).toBe(4);
    expect(await text((await store().content(owner, id))!.body)).toBe("two\n");
    expect((await store().list(owner, { limit: 100, order: "desc" })).items).toHaveLength(1);
    expect(await blobsOf(owner)).toHaveLength(1);
    await expect(
      store().create(owner, { id: "batch/../x", filename: "x", purpose: "batch", body: "" }),
    ).rejects.toThrow(RangeError);
  });

  it("keeps files to their owner: another workspace or organisation finds nothing", async () => {
    const owner = newOwner();
    const sameOrg = newOwner(owner.organisationId);
    const otherOrg: ResourceOwner = {
      organisationId: `org_${randomUUID().slice(0, 8)}`,
      workspaceId: owner.workspaceId,
    };
    const noWorkspace: ResourceOwner = { organisationId: owner.organisationId, workspaceId: "" };
    const stored = await store().create(owner, { filename: "secret", purpose: "batch", body: "mine" });
    for (const other of [sameOrg, otherOrg, noWorkspace]) {
      expect(await store().get(other, stored.file.id)).toBeUndefined();
      expect(await store().content(other, stored.file.id)).toBeUndefined();
      expect(await store().delete(other, stored.file.id)).toBe(false);
      expect((await store().list(other, { limit: 100, order: "desc" })).items).toEqual([]);
      await expect(store().linkProviderFile(other, stored.file.id, "openai:x", "file-up")).rejects.toMatchObject({
        status: 404,
      });
    }
    expect(await text((await store().content(owner, stored.file.id))!.body)).toBe("mine");
    expect(await store().get(owner, "../../etc/passwd")).toBeUndefined();
  });

  it("links provider copies, several at once", async () => {
    const owner = newOwner();
    const stored = await store().create(owner, { filename: "a", purpose: "fine-tune", body: "{}" });
    await Promise.all([
      store().linkProviderFile(owner, stored.file.id, "openai:aaa", "file-openai-1"),
      store().linkProviderFile(owner, stored.file.id, "azure-openai:bbb", "assistant-file-2"),
    ]);
    expect((await store().get(owner, stored.file.id))!.providerFiles).toEqual({
      "openai:aaa": "file-openai-1",
      "azure-openai:bbb": "assistant-file-2",
    });
  });

  it("stages bytes before the record: discard removes them, commit makes the file", async () => {
    const owner = newOwner();
    const dropped = await store().stage(owner, { body: "never a file" });
    expect(await blobsOf(owner)).toEqual([dropped.blobKey]);
    await store().discard(dropped);
    expect(await blobsOf(owner)).toEqual([]);
    const staged = await store().stage(owner, { body: "a file", contentType: "text/plain" });
    const stored = await store().commit(staged, { filename: "f.txt", purpose: "assistants" });
    expect(stored.file).toMatchObject({ id: staged.id, bytes: 6, purpose: "assistants", filename: "f.txt" });
    expect((await store().get(owner, staged.id))!.contentType).toBe("text/plain");
  });
}
