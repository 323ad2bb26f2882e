import { createHash, randomBytes, randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { ResourceOwner } from "../../../../core/auth/resource-owner.ts";
import { RecordFileStore } from "../../../../core/features/files/file-store.ts";
import { UploadStore } from "../../../../core/features/files/upload-store.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import type { Stores } from "../../../../core/store/ports.ts";

/** The upload store (OpenAI's Uploads API) on one platform's stores. */
export function uploadStoreSuite(stores: () => Stores): void {
  const clock = { ms: Date.now() };
  const make = () => {
    const files = new RecordFileStore({
      records: stores().records,
      blobs: stores().blobs,
      maxBytes: 1 << 30,
      now: () => clock.ms,
    });
    return {
      files,
      uploads: new UploadStore({ records: stores().records, blobs: stores().blobs, files, now: () => clock.ms }),
    };
  };
  const newOwner = (): ResourceOwner => ({
    organisationId: `org_${randomUUID().slice(0, 8)}`,
    workspaceId: `ws_${randomUUID().slice(0, 8)}`,
  });
  const streamOf = (bytes: Uint8Array) => new Response(new Uint8Array(bytes)).body!;
  const md5 = (bytes: Uint8Array) => createHash("md5").update(bytes).digest("hex");
  const partBlobs = async (owner: ResourceOwner) =>
    (await stores().blobs.list(`uploads/${owner.organisationId}/`)).items.map((blob) => blob.key);
  async function rejection(promise: Promise<unknown>): Promise<HttpError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  const newUpload = (bytes: number) => ({
    filename: "in.jsonl",
    purpose: "batch" as const,
    bytes,
    mimeType: "text/jsonl",
  });

  it("creates a pending upload that expires in an hour", async () => {
    const { uploads } = make();
    const owner = newOwner();
    const created = await uploads.create(owner, newUpload(10));
    expect(created.upload).toMatchObject({ object: "upload", bytes: 10, status: "pending", file: null });
    expect(created.upload.id).toMatch(/^upload_/);
    expect(created.upload.expires_at).toBe(created.upload.created_at + 3600);
    expect((await uploads.get(owner, created.upload.id))?.upload).toEqual(created.upload);
  });

  it("joins the parts in part_ids order into one file, checks md5, and deletes the parts", async () => {
    const { uploads, files } = make();
    const owner = newOwner();
    const chunks = [randomBytes(1000), randomBytes(2000), randomBytes(500)];
    const whole = Buffer.concat(chunks);
    const { upload } = await uploads.create(owner, newUpload(whole.length));
    // Sent out of order: the file follows part_ids, not the order parts arrived in.
    const p2 = await uploads.addPart(owner, upload.id, streamOf(chunks[1]!));
    const p0 = await uploads.addPart(owner, upload.id, streamOf(chunks[0]!));
    const p1 = await uploads.addPart(owner, upload.id, streamOf(chunks[2]!));
    expect(p0).toMatchObject({ object: "upload.part", upload_id: upload.id });
    expect(p0.id).toMatch(/^part_/);
    expect(await partBlobs(owner)).toHaveLength(3);

    const wrongMd5 = await rejection(
      uploads.complete(owner, upload.id, { partIds: [p0.id, p2.id, p1.id], md5: "0".repeat(32) }),
    );
    expect(wrongMd5).toMatchObject({ status: 400, param: "md5" });
    // Refused, the upload is pending again and the parts remain.
    expect((await uploads.get(owner, upload.id))?.upload.status).toBe("pending");

    const done = await uploads.complete(owner, upload.id, { partIds: [p0.id, p2.id, p1.id], md5: md5(whole) });
    expect(done.upload.status).toBe("completed");
    expect(done.upload.file).toMatchObject({
      object: "file",
      bytes: whole.length,
      purpose: "batch",
      filename: "in.jsonl",
    });
    const content = await files.content(owner, done.upload.file!.id);
    expect(Buffer.from(await new Response(content!.body).arrayBuffer()).equals(whole)).toBe(true);
    expect(content!.file.contentType).toBe("text/jsonl");
    expect(await partBlobs(owner)).toEqual([]);
    expect((await uploads.get(owner, upload.id))?.upload.status).toBe("completed");

    // Completed: no second file, no more parts.
    expect(await rejection(uploads.complete(owner, upload.id, { partIds: [p0.id] }))).toMatchObject({ status: 400 });
    expect(await rejection(uploads.addPart(owner, upload.id, streamOf(randomBytes(1))))).toMatchObject({
      status: 400,
    });
    expect((await files.list(owner, { limit: 100, order: "asc" })).items).toHaveLength(1);
  });

  it("refuses a total other than the declared bytes, and parts past it", async () => {
    const { uploads } = make();
    const owner = newOwner();
    const { upload } = await uploads.create(owner, newUpload(100));
    const part = await uploads.addPart(owner, upload.id, streamOf(randomBytes(60)));
    const short = await rejection(uploads.complete(owner, upload.id, { partIds: [part.id] }));
    expect(short).toMatchObject({ status: 400, param: "part_ids" });
    const over = await rejection(uploads.addPart(owner, upload.id, streamOf(randomBytes(41))));
    expect(over).toMatchObject({ status: 400, param: "data" });
    expect(await partBlobs(owner)).toHaveLength(1);
    const unknown = await rejection(uploads.complete(owner, upload.id, { partIds: [part.id, "part_nope"] }));
    expect(unknown).toMatchObject({ status: 400, param: "part_ids[1]" });
    const twice = await rejection(uploads.complete(owner, upload.id, { partIds: [part.id, part.id] }));
    expect(twice).toMatchObject({ status: 400 });
  });

  it("never lets parts sent at once pass the declared bytes", async () => {
    const { uploads } = make();
    const owner = newOwner();
    const { upload } = await uploads.create(owner, newUpload(100));
    const results = await Promise.allSettled(
      Array.from({ length: 6 }, () => uploads.addPart(owner, upload.id, streamOf(randomBytes(30)))),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(3);
    expect((await uploads.get(owner, upload.id))?.received).toBe(90);
  });

  it("makes one file when two completes race", async () => {
    const { uploads, files } = make();
    const owner = newOwner();
    const bytes = randomBytes(4096);
    const { upload } = await uploads.create(owner, newUpload(bytes.length));
    const part = await uploads.addPart(owner, upload.id, streamOf(bytes));
    const results = await Promise.allSettled([
      uploads.complete(owner, upload.id, { partIds: [part.id] }),
      uploads.complete(owner, upload.id, { partIds: [part.id] }),
    ]);
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    expect((await files.list(owner, { limit: 100, order: "asc" })).items).toHaveLength(1);
  });

  it("cancels: parts deleted, no more parts or complete", async () => {
    const { uploads } = make();
    const owner = newOwner();
    const { upload } = await uploads.create(owner, newUpload(10));
    const part = await uploads.addPart(owner, upload.id, streamOf(randomBytes(10)));
    const cancelled = await uploads.cancel(owner, upload.id);
    expect(cancelled.upload.status).toBe("cancelled");
    expect(await partBlobs(owner)).toEqual([]);
    expect(await rejection(uploads.complete(owner, upload.id, { partIds: [part.id] }))).toMatchObject({
      status: 400,
      code: "upload_cancelled",
    });
    expect(await rejection(uploads.cancel(owner, upload.id))).toMatchObject({ status: 400 });
  });

  it("answers an expired upload as expired and never joins its parts", async () => {
    const { uploads } = make();
    const owner = newOwner();
    const { upload } = await uploads.create(owner, newUpload(10));
    const part = await uploads.addPart(owner, upload.id, streamOf(randomBytes(10)));
    clock.ms += 3601 * 1000;
    try {
      expect((await uploads.get(owner, upload.id))?.upload.status).toBe("expired");
      const refused = await rejection(uploads.complete(owner, upload.id, { partIds: [part.id] }));
      expect(refused).toMatchObject({ status: 400, code: "upload_expired" });
      expect(await rejection(uploads.addPart(owner, upload.id, streamOf(randomBytes(1))))).toMatchObject({
        status: 400,
        code: "upload_expired",
      });
    } finally {
      clock.ms -= 3601 * 1000;
    }
  });

  it("keeps uploads to their owner: another workspace finds none", async () => {
    const { uploads } = make();
    const owner = newOwner();
    const other = { ...owner, workspaceId: `ws_${randomUUID().slice(0, 8)}` };
    const { upload } = await uploads.create(owner, newUpload(10));
    expect(await uploads.get(other, upload.id)).toBeUndefined();
    expect(await rejection(uploads.addPart(other, upload.id, streamOf(randomBytes(1))))).toMatchObject({ status: 404 });
    expect(await rejection(uploads.cancel(other, upload.id))).toMatchObject({ status: 404 });
    expect(await rejection(uploads.complete(other, upload.id, { partIds: ["part_x"] }))).toMatchObject({
      status: 404,
    });
    expect((await uploads.get(owner, upload.id))?.upload.status).toBe("pending");
  });
}
