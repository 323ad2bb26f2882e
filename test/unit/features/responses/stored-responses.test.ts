import { describe, expect, it } from "vitest";
import type { Principal } from "../../../../core/auth/principal.ts";
import type { RequestContext } from "../../../../core/services.ts";
import { responseOwnerOf } from "../../../../core/features/responses/owner.ts";
import { responseStoreOf } from "../../../../core/features/responses/response-store.ts";
import { handlers } from "../../../../core/routes/handlers/responses.ts";
import { localResponseServices, storedResponse } from "./local-response-stores.ts";

const services = localResponseServices();
const store = () => responseStoreOf(services());

const principal = (workspaceId?: string): Principal => ({
  kind: "api_key",
  organisationId: "org_handlers",
  workspaceId,
  keyType: workspaceId ? "workspace" : "organisation",
  scopes: ["*"],
});

function context(who: Principal, id: string): RequestContext {
  return {
    traceId: "t",
    params: { id },
    principal: who,
    services: services() as never,
    signal: new AbortController().signal,
    waitUntil: () => {},
    startedAt: 0,
  };
}

const call = (
  handler: keyof typeof handlers,
  who: Principal,
  id: string,
  query = "",
  method = "GET",
  headers: Record<string, string> = {},
) =>
  handlers[handler]!(
    new Request(`http://gateway.test/v1/responses/${id}${query}`, { method, headers }),
    context(who, id),
  );
const JULY_2026 = { "x-gateway-beta": "use-responses-api-2026-07-30" };

async function saved(who: Principal, fields: Record<string, any> = {}) {
  const items = store().assignItemIds(["a", "b", "c"].map((text) => ({ role: "user", content: text })));
  const entry = storedResponse(fields, items);
  await store().save(responseOwnerOf(who), entry);
  return { id: String(entry.response.id), entry, items };
}

describe("GET /v1/responses/:id", () => {
  it("answers the stored response to its workspace, 404 to any other caller", async () => {
    const owner = principal("ws_a");
    const { id, entry } = await saved(owner);
    const response = await call("getResponse", owner, id, "?include[]=reasoning.encrypted_content", "GET", JULY_2026);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(entry.response);
    // Without the beta header: the spec's schema (no `background`, among others).
    const plainSchema = await (await call("getResponse", owner, id)).json();
    expect(plainSchema.id).toBe(id);
    expect("background" in plainSchema).toBe(false);
    for (const stranger of [principal("ws_b"), principal(), { ...owner, organisationId: "org_other" }]) {
      await expect(call("getResponse", stranger, id)).rejects.toMatchObject({
        status: 404,
        message: `Response with id '${id}' not found.`,
      });
    }
  });

  it("scopes an organisation key without a workspace to its own responses", async () => {
    const admin = principal();
    const { id } = await saved(admin);
    expect((await call("getResponse", admin, id)).status).toBe(200);
    await expect(call("getResponse", principal("ws_a"), id)).rejects.toMatchObject({ status: 404 });
  });

  it("validates include values (400 naming include) and refuses stream", async () => {
    const owner = principal("ws_a");
    const { id } = await saved(owner);
    const ok = await call(
      "getResponse",
      owner,
      id,
      "?include=file_search_call.results&include=message.input_image.image_url",
    );
    expect(ok.status).toBe(200);
    await expect(call("getResponse", owner, id, "?include[]=output.everything")).rejects.toMatchObject({
      status: 400,
      param: "include",
    });
    await expect(call("getResponse", owner, id, "?stream=true")).rejects.toMatchObject({
      status: 400,
      param: "stream",
    });
  });
});

describe("DELETE /v1/responses/:id", () => {
  it("answers OpenAI's deleted object, after which the response is gone; a stranger gets 404 and deletes nothing", async () => {
    const owner = principal("ws_a");
    const { id } = await saved(owner);
    await expect(call("deleteResponse", principal("ws_b"), id, "", "DELETE")).rejects.toMatchObject({ status: 404 });
    const response = await call("deleteResponse", owner, id, "", "DELETE");
    expect(await response.json()).toEqual({ id, object: "response", deleted: true });
    await expect(call("getResponse", owner, id)).rejects.toMatchObject({ status: 404 });
    await expect(call("deleteResponse", owner, id, "", "DELETE")).rejects.toMatchObject({ status: 404 });
  });
});

describe("GET /v1/responses/:id/input_items", () => {
  it("pages the items from the query string", async () => {
    const owner = principal("ws_a");
    const { id, items } = await saved(owner);
    const response = await call("listInputItems", owner, id, `/input_items?limit=1&order=desc&after=${items[2]!.id}`);
    expect(await response.json()).toEqual({
      object: "list",
      data: [items[1]],
      has_more: true,
      first_id: items[1]!.id,
      last_id: items[1]!.id,
    });
    const all = await (await call("listInputItems", owner, id, "/input_items")).json();
    expect(all.data.map((item: { id: string }) => item.id)).toEqual(items.map((item) => item.id));
  });

  it("answers 400 naming the param for a bad limit, order, cursor or include, and 404 for a stranger", async () => {
    const owner = principal("ws_a");
    const { id } = await saved(owner);
    for (const [query, param] of [
      ["limit=abc", "limit"],
      ["limit=0", "limit"],
      ["limit=101", "limit"],
      ["limit=1.5", "limit"],
      ["limit=", "limit"],
      ["order=newest", "order"],
      ["after=msg_nope", "after"],
      ["before=msg_nope", "before"],
      ["include[]=nope", "include"],
    ]) {
      await expect(call("listInputItems", owner, id, `/input_items?${query}`)).rejects.toMatchObject({
        status: 400,
        param,
      });
    }
    await expect(call("listInputItems", principal("ws_b"), id, "/input_items")).rejects.toMatchObject({
      status: 404,
    });
  });
});

describe("POST /v1/responses/:id/cancel", () => {
  it("answers the cancelled response for a running background response, 400 for a synchronous one", async () => {
    const owner = principal("ws_a");
    const { id } = await saved(owner, { status: "in_progress", background: true });
    const response = await call("cancelResponse", owner, id, "/cancel", "POST", JULY_2026);
    expect(await response.json()).toMatchObject({ id, object: "response", status: "cancelled", background: true });
    // The spec's schema has no `cancelled`: a failed response whose error says so.
    const plainSchema = await (await call("getResponse", owner, id)).json();
    expect(plainSchema).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    const plain = await saved(owner);
    await expect(call("cancelResponse", owner, plain.id, "/cancel", "POST")).rejects.toMatchObject({ status: 400 });
    await expect(call("cancelResponse", principal("ws_b"), id, "/cancel", "POST")).rejects.toMatchObject({
      status: 404,
    });
  });
});
