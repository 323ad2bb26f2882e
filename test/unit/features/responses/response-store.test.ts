import { describe, expect, it } from "vitest";
import { HttpError } from "../../../../core/http/errors.ts";
import { ResponseStore } from "../../../../core/features/responses/response-store.ts";
import { localResponseServices, newOwner, storedResponse } from "./local-response-stores.ts";

const services = localResponseServices();
const store = (retentionDays = 30, now?: () => number) =>
  new ResponseStore(services().stores.records, services().stores.blobs, { retentionDays, now });

const userMessage = (id: string, text: string) => ({
  id,
  type: "message",
  role: "user",
  status: "completed",
  content: [{ type: "input_text", text }],
});

describe("saving, reading and deleting a response", () => {
  it("reads back what was saved, and nothing once deleted", async () => {
    const owner = newOwner();
    const input = [userMessage("msg_1", "Hi")];
    const saved = storedResponse({ output: [{ id: "msg_2", type: "message", role: "assistant" }] }, input);
    await store().save(owner, saved);
    expect(await store().get(owner, saved.response.id)).toEqual(saved);
    expect(await store().status(owner, saved.response.id)).toBe("completed");
    expect(await store().delete(owner, saved.response.id)).toBe(true);
    expect(await store().get(owner, saved.response.id)).toBeUndefined();
    expect(await store().delete(owner, saved.response.id)).toBe(false);
  });

  it("keeps another workspace's and another organisation's responses out of reach (absent, not forbidden)", async () => {
    const owner = newOwner();
    const saved = storedResponse({}, [userMessage("msg_1", "secret")]);
    await store().save(owner, saved);
    const id = saved.response.id;
    for (const stranger of [
      { ...owner, workspaceId: "ws_other" },
      { ...owner, organisationId: "org_other" },
      { organisationId: owner.organisationId },
    ]) {
      expect(await store().get(stranger, id)).toBeUndefined();
      expect(await store().listInputItems(stranger, id, {})).toBeUndefined();
      expect(await store().setStatus(stranger, id, "cancelled")).toBeUndefined();
      expect(await store().delete(stranger, id)).toBe(false);
      await expect(store().conversation(stranger, id)).rejects.toMatchObject({
        status: 404,
        param: "previous_response_id",
        message: `Previous response with id '${id}' not found.`,
      });
    }
    expect(await store().get(owner, id)).toBeDefined();
  });

  it("finds a response's output items by id for their owner only (item references)", async () => {
    const owner = newOwner();
    const answer = { id: "msg_out_1", type: "message", role: "assistant", content: [] };
    const saved = storedResponse({ output: [answer] }, [userMessage("msg_in_1", "Hi")]);
    await store().save(owner, saved);
    expect(await store().findOutputItem(owner, "msg_out_1")).toEqual({ item: answer, native: saved.native });
    // Input items are not referenced by the SDKs; and another workspace's item is as unknown as a made-up id.
    expect(await store().findOutputItem(owner, "msg_in_1")).toBeUndefined();
    expect(await store().findOutputItem({ ...owner, workspaceId: "ws_other" }, "msg_out_1")).toBeUndefined();
    expect(await store().findOutputItem(owner, "../x")).toBeUndefined();
    await store().delete(owner, saved.response.id);
    expect(await store().findOutputItem(owner, "msg_out_1")).toBeUndefined();
  });

  it("treats an id that cannot be a response id as unknown", async () => {
    expect(await store().get(newOwner(), "../../etc/passwd")).toBeUndefined();
  });

  it("treats a response past its retention as absent", async () => {
    const owner = newOwner();
    const day = 86_400_000;
    // Stored 31 days ago (the retention counts from when the gateway stored it, whatever its created_at).
    const monthAgo = () => Date.now() - 31 * day;
    const old = storedResponse({ created_at: Math.floor(Date.now() / 1000) });
    await store(30, monthAgo).save(owner, old);
    expect(await store().get(owner, old.response.id)).toBeUndefined();
    const kept = storedResponse({ created_at: Math.floor(Date.now() / 1000) });
    await store(40, monthAgo).save(owner, kept);
    expect(await store(40).get(owner, kept.response.id)).toBeDefined();
    // A provider's created_at far in the past does not make a fresh response expire.
    const fresh = storedResponse({ created_at: 1_700_000_000 });
    await store().save(owner, fresh);
    expect(await store().get(owner, fresh.response.id)).toBeDefined();
  });
});

describe("input items", () => {
  const ids = ["msg_a", "msg_b", "msg_c", "msg_d", "msg_e"];
  async function saved() {
    const owner = newOwner();
    const entry = storedResponse(
      {},
      ids.map((id) => userMessage(id, id)),
      [userMessage("msg_earlier", "from a previous response"), ...ids.map((id) => userMessage(id, id))],
    );
    await store().save(owner, entry);
    const page = async (query: Record<string, unknown>) => {
      const list = await store().listInputItems(owner, entry.response.id, query);
      return { ...list!, data: list!.data.map((item) => item.id) };
    };
    return page;
  }

  it("lists this request's own items, oldest first by default, 20 at most", async () => {
    const page = await saved();
    expect(await page({})).toEqual({
      object: "list",
      data: ids,
      has_more: false,
      first_id: "msg_a",
      last_id: "msg_e",
    });
  });

  it("pages forward with `after` in both orders", async () => {
    const page = await saved();
    expect(await page({ limit: 2 })).toMatchObject({ data: ["msg_a", "msg_b"], has_more: true, last_id: "msg_b" });
    expect(await page({ limit: 2, after: "msg_b" })).toMatchObject({
      data: ["msg_c", "msg_d"],
      has_more: true,
      first_id: "msg_c",
      last_id: "msg_d",
    });
    expect(await page({ limit: 2, after: "msg_d" })).toMatchObject({ data: ["msg_e"], has_more: false });
    expect(await page({ limit: 2, order: "desc" })).toMatchObject({
      data: ["msg_e", "msg_d"],
      has_more: true,
      first_id: "msg_e",
      last_id: "msg_d",
    });
    expect(await page({ limit: 2, order: "desc", after: "msg_d" })).toMatchObject({
      data: ["msg_c", "msg_b"],
      has_more: true,
    });
    expect(await page({ limit: 3, order: "desc", after: "msg_c" })).toMatchObject({
      data: ["msg_b", "msg_a"],
      has_more: false,
      first_id: "msg_b",
      last_id: "msg_a",
    });
  });

  it("pages back with `before` (the page just before it) and bounds a window with both", async () => {
    const page = await saved();
    expect(await page({ limit: 1, before: "msg_c" })).toMatchObject({
      data: ["msg_b"],
      has_more: true,
      first_id: "msg_b",
      last_id: "msg_b",
    });
    expect(await page({ limit: 5, before: "msg_c" })).toMatchObject({ data: ["msg_a", "msg_b"], has_more: false });
    expect(await page({ limit: 2, order: "desc", before: "msg_b" })).toMatchObject({
      data: ["msg_d", "msg_c"],
      has_more: true,
    });
    expect(await page({ limit: 2, after: "msg_a", before: "msg_e" })).toMatchObject({
      data: ["msg_b", "msg_c"],
      has_more: true,
    });
    expect(await page({ after: "msg_a", before: "msg_e" })).toMatchObject({
      data: ["msg_b", "msg_c", "msg_d"],
      has_more: false,
    });
    expect(await page({ after: "msg_d", before: "msg_b" })).toEqual({
      object: "list",
      data: [],
      has_more: false,
      first_id: null,
      last_id: null,
    });
  });

  it("answers 400 naming the param for a cursor that is not an item of the response, a bad limit or order", async () => {
    const page = await saved();
    await expect(page({ after: "msg_earlier" })).rejects.toMatchObject({ status: 400, param: "after" });
    await expect(page({ before: "msg_zzz" })).rejects.toMatchObject({ status: 400, param: "before" });
    for (const limit of [0, 101, 2.5, Number.NaN, -1]) {
      await expect(page({ limit })).rejects.toMatchObject({ status: 400, param: "limit" });
    }
    expect((await page({ limit: 100 })).data).toHaveLength(5);
    expect((await page({ limit: 1 })).data).toEqual(["msg_a"]);
    await expect(page({ order: "newest" })).rejects.toBeInstanceOf(HttpError);
    await expect(page({ order: "newest" })).rejects.toMatchObject({ status: 400, param: "order" });
  });
});

describe("conversations (previous_response_id)", () => {
  it("chains three responses: each context, then its output as input items; instructions never carried", async () => {
    const owner = newOwner();
    const s = store();
    const first = s.assignItemIds([{ role: "user", content: "What is the weather in Paris?" }]);
    const reasoning = { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "opaque" };
    const call = {
      id: "fc_1",
      type: "function_call",
      call_id: "call_1",
      name: "weather",
      arguments: '{"city":"Paris"}',
      status: "completed",
    };
    const one = storedResponse({ instructions: "Answer in French.", output: [reasoning, call] }, first);
    await s.save(owner, one);

    const second = s.assignItemIds([{ type: "function_call_output", call_id: "call_1", output: "18C" }]);
    const secondContext = [...(await s.conversation(owner, one.response.id)), ...second];
    const answer = {
      id: "msg_2",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "Il fait 18C.", annotations: [] }],
    };
    const two = storedResponse(
      { instructions: "Answer in German.", previous_response_id: one.response.id, output: [answer] },
      second,
      secondContext,
    );
    await s.save(owner, two);

    const third = s.assignItemIds([{ role: "user", content: "And tomorrow?" }]);
    const thirdContext = [...(await s.conversation(owner, two.response.id)), ...third];
    const three = storedResponse(
      {
        instructions: "Answer in Italian.",
        previous_response_id: two.response.id,
        output: [{ ...answer, id: "msg_3", content: [{ type: "output_text", text: "Domani 20C.", annotations: [] }] }],
      },
      third,
      thirdContext,
    );
    await s.save(owner, three);

    const conversation = await s.conversation(owner, three.response.id);
    expect(conversation.map((item) => item.id)).toEqual([
      first[0]!.id,
      "rs_1",
      "fc_1",
      second[0]!.id,
      "msg_2",
      third[0]!.id,
      "msg_3",
    ]);
    expect(conversation[1]).toEqual(reasoning);
    expect(conversation[2]).toEqual(call);
    expect(conversation[4]).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "output_text", text: "Il fait 18C." }],
    });
    expect(JSON.stringify(conversation)).not.toMatch(/Answer in/);
    expect(conversation.some((item) => item.role === "system" || item.role === "developer")).toBe(false);
    // Only the request's own items are its input items.
    const listed = await s.listInputItems(owner, three.response.id, {});
    expect(listed?.data.map((item) => item.id)).toEqual([third[0]!.id]);
  });

  it("refuses to continue from a background response that has not finished", async () => {
    const owner = newOwner();
    const running = storedResponse({ status: "in_progress", background: true });
    await store().save(owner, running);
    await expect(store().conversation(owner, running.response.id)).rejects.toMatchObject({
      status: 400,
      param: "previous_response_id",
    });
  });
});

describe("status changes", () => {
  it("moves only forward: queued -> in_progress -> a final status, and a final status never changes", async () => {
    const owner = newOwner();
    const queued = storedResponse({ status: "queued", background: true });
    await store().save(owner, queued);
    const id = queued.response.id;
    expect((await store().setStatus(owner, id, "in_progress"))?.applied).toBe(true);
    expect((await store().setStatus(owner, id, "queued"))?.applied).toBe(false);
    const done = await store().setStatus(owner, id, "incomplete", {
      output: [{ id: "msg_1", type: "message" }],
      incomplete_details: { reason: "max_output_tokens" },
    });
    expect(done?.applied).toBe(true);
    expect(done?.entry.response).toMatchObject({ id, status: "incomplete", output: [{ id: "msg_1" }] });
    for (const status of ["completed", "failed", "cancelled", "in_progress"] as const) {
      const change = await store().setStatus(owner, id, status);
      expect(change).toMatchObject({ applied: false, entry: { response: { status: "incomplete" } } });
    }
    expect((await store().get(owner, id))?.response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    });
  });
});
