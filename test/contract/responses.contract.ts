import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ResponseStore, type StoredResponse } from "../../core/responses/response-store.ts";
import type { ResponseOwner } from "../../core/responses/owner.ts";
import type { Stores } from "../../core/store/ports.ts";

/**
 * The stored-response rules on a platform's Records and Blobs: what GET/DELETE /v1/responses/{id}, input items,
 * cancel and previous_response_id rely on, on every platform.
 */
export function responseStoreContract(stores: () => Stores) {
  describe("response store", () => {
    const store = () => new ResponseStore(stores().records, stores().blobs, { retentionDays: 30 });
    const owner = (): ResponseOwner => ({ organisationId: `org_${randomUUID()}`, workspaceId: `ws_${randomUUID()}` });
    const now = () => Math.floor(Date.now() / 1000);
    const entry = (fields: Record<string, any> = {}, inputText = "Hello"): StoredResponse => {
      const inputItems = store().assignItemIds([{ role: "user", content: inputText }]);
      return {
        response: {
          id: `resp_${randomUUID().replaceAll("-", "")}`,
          object: "response",
          created_at: now(),
          status: "completed",
          model: "gpt-4o-mini",
          output: [
            {
              id: `msg_${randomUUID().replaceAll("-", "")}`,
              type: "message",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "Hi!", annotations: [] }],
            },
          ],
          ...fields,
        },
        inputItems,
        context: inputItems,
        provider: "openai",
        native: true,
      };
    };

    it("stores a response larger than a DynamoDB item and reads it back whole", async () => {
      const who = owner();
      const large = entry({}, "x".repeat(600_000));
      await store().save(who, large);
      const read = await store().get(who, large.response.id);
      expect(read).toEqual(large);
      expect(read?.inputItems[0]?.content[0].text).toHaveLength(600_000);
    });

    it("answers another workspace, another organisation and an admin key without a workspace: absent", async () => {
      const who = owner();
      const saved = entry();
      await store().save(who, saved);
      const id = saved.response.id;
      expect(await store().get({ ...who, workspaceId: `ws_${randomUUID()}` }, id)).toBeUndefined();
      expect(await store().get({ ...who, organisationId: `org_${randomUUID()}` }, id)).toBeUndefined();
      expect(await store().get({ organisationId: who.organisationId, workspaceId: "" }, id)).toBeUndefined();
      expect(await store().delete({ ...who, workspaceId: `ws_${randomUUID()}` }, id)).toBe(false);
      expect(await store().get(who, id)).toBeDefined();
    });

    it("keeps one id per owner: two workspaces store and read their own response under the same id", async () => {
      const [first, second] = [owner(), owner()];
      const id = `resp_${randomUUID().replaceAll("-", "")}`;
      const mine = entry({ id }, "first workspace");
      const theirs = entry({ id }, "second workspace");
      await store().save(first, mine);
      await store().save(second, theirs);
      expect(await store().get(first, id)).toEqual(mine);
      expect(await store().get(second, id)).toEqual(theirs);
      await expect(store().save(first, entry({ id }))).rejects.toThrow();
      expect(await store().delete(first, id)).toBe(true);
      expect(await store().get(second, id)).toEqual(theirs);
    });

    it("reads a response stored under the key before it held the owner, for its owner only", async () => {
      const who = owner();
      const saved = entry({ status: "queued", background: true });
      const id = saved.response.id;
      await store().save(who, saved);
      // Moved to where it was stored before (pk RESPONSE#<id>), as a response of an earlier version is.
      const { records } = stores();
      const ownerKey = `RESPONSE#${who.organisationId}#${who.workspaceId}#${id}`;
      const current = await records.get(ownerKey, "RESPONSE");
      expect(current).toBeDefined();
      await records.put({ ...current!, pk: `RESPONSE#${id}` });
      await records.delete(ownerKey, "RESPONSE");
      expect((await store().get(who, id))?.response.id).toBe(id);
      expect(await store().get(owner(), id)).toBeUndefined();
      expect((await store().setStatus(who, id, "completed"))?.applied).toBe(true);
      expect(await store().status(who, id)).toBe("completed");
      expect(await store().delete(who, id)).toBe(true);
      expect(await records.get(`RESPONSE#${id}`, "RESPONSE")).toBeUndefined();
    });

    it("deletes the index and every blob of the response", async () => {
      const who = owner();
      const saved = entry({ status: "queued", background: true });
      await store().save(who, saved);
      await store().setStatus(who, saved.response.id, "in_progress");
      expect(await store().delete(who, saved.response.id)).toBe(true);
      expect(await store().get(who, saved.response.id)).toBeUndefined();
      expect(await store().delete(who, saved.response.id)).toBe(false);
      const left = await stores().blobs.list(`responses/${who.organisationId}/`);
      expect(left.items).toEqual([]);
    });

    it("treats a response past its retention as absent", async () => {
      const who = owner();
      const old = entry({ created_at: now() - 31 * 86_400 });
      // Stored 31 days ago: the retention counts from when the gateway stored it.
      const monthAgo = () => Date.now() - 31 * 86_400_000;
      await new ResponseStore(stores().records, stores().blobs, { retentionDays: 30, now: monthAgo }).save(who, old);
      expect(await store().get(who, old.response.id)).toBeUndefined();
      await expect(store().conversation(who, old.response.id)).rejects.toMatchObject({ status: 404 });
    });

    it("lets exactly one of a racing cancel and completion win, and never overwrites a cancel", async () => {
      const who = owner();
      const saved = entry({ status: "in_progress", background: true, output: [] });
      await store().save(who, saved);
      const id = saved.response.id;
      const done = { output: saved.response.output, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } };
      const [cancel, complete] = await Promise.all([
        store().setStatus(who, id, "cancelled"),
        store().setStatus(who, id, "completed", done),
      ]);
      expect([cancel?.applied, complete?.applied].filter(Boolean)).toHaveLength(1);
      const final = await store().get(who, id);
      expect(final?.response.status).toBe(cancel?.applied ? "cancelled" : "completed");
      // The loser's blob is gone: one blob per response remains.
      const blobs = await stores().blobs.list(`responses/${who.organisationId}/`);
      expect(blobs.items).toHaveLength(1);

      const later = entry({ status: "in_progress", background: true, output: [] });
      await store().save(who, later);
      expect((await store().setStatus(who, later.response.id, "cancelled"))?.applied).toBe(true);
      const late = await store().setStatus(who, later.response.id, "completed", done);
      expect(late?.applied).toBe(false);
      expect((await store().get(who, later.response.id))?.response).toMatchObject({ status: "cancelled", output: [] });
    });

    it("saves a response id once", async () => {
      const who = owner();
      const saved = entry();
      await store().save(who, saved);
      await expect(store().save(who, { ...saved, native: false })).rejects.toThrow();
      expect((await store().get(who, saved.response.id))?.native).toBe(true);
    });
  });
}
