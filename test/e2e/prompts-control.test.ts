import { Portkey } from "portkey-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/**
 * Saved prompts through HTTP, with the portkey-ai SDK where it has the method: prompts (create, list, retrieve,
 * update, delete), versions (list, retrieve, label) and publish; partials with versions and the 409 on deleting
 * one a published prompt includes; labels (the three defaults, the 409 on deleting one in use); collections
 * (nesting, the workspace rule, the 409 on deleting a non-empty one); sharing, fork and unshare across
 * workspaces, and the 409 on deleting a workspace that still shares a prompt. Validation answers 400 in
 * OpenAI's error shape naming the field.
 */

let gateway: TestGateway;
let admin: string;
let portkey: Portkey;
let wsA: { id: string; slug?: string };
let wsB: { id: string; slug?: string };
let keyA: string;
let keyB: string;

const CHAT_TEMPLATE = JSON.stringify([
  { role: "system", content: "You are {{persona}}." },
  { role: "user", content: "{{question}}" },
]);

beforeAll(async () => {
  gateway = await startTestGateway();
  admin = gateway.adminKey;
  portkey = new Portkey({ apiKey: admin, baseURL: `${gateway.url}/v1` });
  wsA = await seedWorkspace(gateway, "Prompts A");
  wsB = await seedWorkspace(gateway, "Prompts B");
  keyA = (await createKey(gateway, admin, "workspace", "service", { name: "a", workspace_id: wsA.id, scopes: ["*"] }))
    .key;
  keyB = (await createKey(gateway, admin, "workspace", "service", { name: "b", workspace_id: wsB.id, scopes: ["*"] }))
    .key;
});

afterAll(async () => {
  await gateway?.close();
});

/** What the SDK threw: its HTTP status and the OpenAI-shaped error body. */
async function sdkError(promise: Promise<unknown>): Promise<{ status: number; error: any }> {
  const error: any = await promise.then(
    () => expect.fail("expected the SDK call to fail"),
    (failure: unknown) => failure,
  );
  return { status: error.status, error: error.error?.error };
}

describe("prompts and versions through the portkey-ai SDK", () => {
  it("creates, retrieves, lists, updates (new versions), publishes and deletes a prompt", async () => {
    const collection: any = await portkey.collections.create({ name: "Support", workspace_id: wsA.id });
    const created: any = await portkey.prompts.create({
      name: "Support answer",
      collection_id: collection.id,
      string: CHAT_TEMPLATE,
      parameters: { temperature: 0.2, max_tokens: 200 },
      model: "gpt-4o-mini",
      version_description: "first",
    });
    expect(created).toMatchObject({ object: "prompt", version_id: "1", workspace_id: wsA.id });
    expect(created.id).toMatch(/^pp_/);
    expect(created.slug).toMatch(/^support-answer-/);

    const read: any = await portkey.prompts.retrieve(created.slug);
    expect(read).toMatchObject({
      id: created.id,
      string: CHAT_TEMPLATE,
      parameters: { temperature: 0.2, max_tokens: 200 },
      model: "gpt-4o-mini",
      collection_id: collection.id,
      prompt_version: 1,
      default_version: 1,
    });

    // A content change writes version 2 (unpublished); a rename writes none.
    const updated: any = await portkey.prompts.update(created.id, {
      string: "Hello {{name}}",
      version_description: "text",
    });
    expect(updated).toMatchObject({
      prompt_version: 2,
      latest_version: 2,
      default_version: 1,
      string: "Hello {{name}}",
    });
    await portkey.prompts.update(created.id, { name: "Support answer (renamed)" });
    const afterRename: any = await portkey.prompts.retrieve(created.id);
    expect(afterRename).toMatchObject({ name: "Support answer (renamed)", latest_version: 2, prompt_version: 1 });
    // The new version kept what it did not change.
    const v2: any = await portkey.prompts.versions.retrieve(created.id, "2");
    expect(v2).toMatchObject({ prompt_version: 2, model: "gpt-4o-mini", string: "Hello {{name}}", is_default: false });
    expect((await call(gateway, admin, "GET", `/v1/prompts/${created.id}?version=2`)).body.string).toBe(
      "Hello {{name}}",
    );

    const versions: any = await portkey.prompts.versions.list(created.id);
    expect(versions.data.map((version: any) => version.prompt_version)).toEqual([2, 1]);

    const published: any = await portkey.prompts.publish(created.id, { version: 2 });
    expect(published.default_version).toBe(2);
    expect(((await portkey.prompts.retrieve(created.id)) as any).string).toBe("Hello {{name}}");
    expect((await sdkError(portkey.prompts.publish(created.id, { version: 9 }))).status).toBe(404);

    const listed: any = await portkey.prompts.list({ workspace_id: wsA.id, search: "renamed" });
    expect(listed.data.map((prompt: any) => prompt.id)).toEqual([created.id]);
    expect(listed.total).toBe(1);
    const inCollection: any = await portkey.prompts.list({
      collection_id: collection.id,
      page_size: 10,
      current_page: 0,
    });
    expect(inCollection.data).toHaveLength(1);

    await portkey.prompts.delete(created.id);
    expect((await sdkError(portkey.prompts.retrieve(created.id))).status).toBe(404);
    expect((await call(gateway, admin, "GET", `/v1/prompts/${created.id}/versions/1`)).status).toBe(404);
    await portkey.collections.delete(collection.id);
  });

  it("refuses malformed templates and bodies with 400 naming the field", async () => {
    const unclosed = await sdkError(
      portkey.prompts.create({ name: "x", workspace_id: wsA.id, string: "Hi {{#a}}", parameters: {} } as any),
    );
    expect(unclosed.status).toBe(400);
    expect(unclosed.error).toMatchObject({ param: "string", code: "invalid_template", type: "invalid_request_error" });

    const badChat = await sdkError(
      portkey.prompts.create({
        name: "x",
        workspace_id: wsA.id,
        string: '[{"role":"wizard","content":"hi"}]',
        parameters: {},
      } as any),
    );
    expect(badChat).toMatchObject({ status: 400, error: { param: "string" } });
    expect(badChat.error.message).toMatch(/role/);

    const brokenJson = await sdkError(
      portkey.prompts.create({
        name: "x",
        workspace_id: wsA.id,
        string: '[{"role":"user","content":"hi"}',
        parameters: {},
      } as any),
    );
    expect(brokenJson).toMatchObject({ status: 400, error: { param: "string" } });

    const missingName = await call(gateway, admin, "POST", "/v1/prompts", { string: "hi", workspace_id: wsA.id });
    expect(missingName.status).toBe(400);
    expect(missingName.body.error.param).toBe("name");

    const reserved = await call(gateway, admin, "POST", "/v1/prompts", {
      name: "p",
      slug: "partials",
      string: "hi",
      workspace_id: wsA.id,
    });
    expect(reserved).toMatchObject({ status: 400, body: { error: { param: "slug" } } });

    const nowhere = await call(gateway, admin, "POST", "/v1/prompts", { name: "p", string: "hi" });
    expect(nowhere).toMatchObject({ status: 400, body: { error: { param: "workspace_id" } } });

    const created: any = await portkey.prompts.create({
      name: "valid",
      workspace_id: wsA.id,
      string: "hi",
      parameters: {},
    } as any);
    const badUpdate = await sdkError(portkey.prompts.update(created.id, { string: "{{/closing}}" }));
    expect(badUpdate).toMatchObject({ status: 400, error: { param: "string" } });
    expect(((await portkey.prompts.retrieve(created.id)) as any).latest_version).toBe(1);
    const badVersion = await call(gateway, admin, "GET", `/v1/prompts/${created.id}/versions/abc`);
    expect(badVersion).toMatchObject({ status: 400, body: { error: { param: "versionId" } } });
    await portkey.prompts.delete(created.id);
  });
});

describe("labels", () => {
  it("lists the three defaults, points labels at versions, moves them, and guards deletion", async () => {
    const listed: any = await portkey.labels.list();
    const names = listed.data.map((label: any) => label.name);
    expect(names.slice(0, 3).sort()).toEqual(["development", "production", "staging"]);
    const production = listed.data.find((label: any) => label.name === "production");
    expect(production).toMatchObject({ is_universal: true, workspace_id: null });
    // Listing again creates nothing more.
    expect(((await portkey.labels.list()) as any).total).toBe(listed.total);
    expect((await sdkError(portkey.labels.delete(production.id))).status).toBe(409);

    const prompt: any = await portkey.prompts.create({
      name: "labelled",
      workspace_id: wsA.id,
      string: "v1",
      parameters: {},
    } as any);
    await portkey.prompts.update(prompt.id, { string: "v2" });
    const pointed: any = await portkey.prompts.versions.update(prompt.id, "1", { label_id: production.id });
    expect(pointed.label_ids).toEqual([production.id]);
    // Moving the label: it now points at version 2 only.
    await portkey.prompts.versions.update(prompt.id, "2", { label_id: "production" });
    expect(((await portkey.prompts.versions.retrieve(prompt.id, "1")) as any).label_ids).toEqual([]);
    expect(((await portkey.prompts.retrieve(prompt.id)) as any).labels).toEqual([
      { label_id: production.id, version: 2 },
    ]);

    const custom: any = await portkey.labels.create({ name: "canary", color_code: "#ff0000", workspace_id: wsA.id });
    expect(custom).toMatchObject({ name: "canary", workspace_id: wsA.id, is_universal: false });
    expect(((await portkey.labels.update(custom.id, { description: "5% of traffic" })) as any).description).toBe(
      "5% of traffic",
    );
    await portkey.prompts.versions.update(prompt.id, "1", { label_id: custom.id });
    const inUse = await sdkError(portkey.labels.delete(custom.id));
    expect(inUse).toMatchObject({ status: 409, error: { code: "label_in_use" } });
    expect(inUse.error.message).toContain(prompt.slug);
    await portkey.prompts.delete(prompt.id);
    await portkey.labels.delete(custom.id);
    expect((await sdkError(portkey.labels.retrieve(custom.id))).status).toBe(404);

    const unknownLabel = await call(gateway, admin, "PUT", `/v1/prompts/${prompt.id}/versions/1`, { label_id: "nope" });
    expect(unknownLabel.status).toBe(404);
    const badColour = await call(gateway, admin, "POST", "/v1/labels", { name: "x", color_code: "red" });
    expect(badColour).toMatchObject({ status: 400, body: { error: { param: "color_code" } } });
  });

  it("keeps workspace keys to their own and organisation labels", async () => {
    const own = await call(gateway, keyA, "POST", "/v1/labels", { name: "a-only" });
    expect(own.body).toMatchObject({ workspace_id: wsA.id });
    const seenByB = (await call(gateway, keyB, "GET", "/v1/labels")).body.data.map((label: any) => label.name);
    expect(seenByB).toContain("production");
    expect(seenByB).not.toContain("a-only");
    expect((await call(gateway, keyB, "GET", `/v1/labels/${own.body.id}`)).status).toBe(404);
    expect((await call(gateway, keyA, "POST", "/v1/labels", { name: "org-wide", organisation_id: "x" })).status).toBe(
      403,
    );
  });
});

describe("partials", () => {
  it("creates, versions, publishes and deletes a partial; a published prompt that includes it blocks deletion", async () => {
    const partial: any = await portkey.prompts.partials.create({
      name: "Tone",
      string: "Answer politely, {{name}}.",
      workspace_id: wsA.id,
    });
    expect(partial).toMatchObject({ object: "prompt_partial", version_id: "1" });
    expect(partial.id).toMatch(/^ppp_/);
    // `/v1/prompts/partials/...` reaches the partial, not a prompt named "partials".
    expect(((await portkey.prompts.partials.retrieve(partial.slug)) as any).string).toBe("Answer politely, {{name}}.");

    await portkey.prompts.partials.update(partial.id, { string: "Answer briefly.", description: "shorter" });
    const versions: any = await portkey.prompts.partials.versions.list(partial.id);
    expect(versions.data.map((version: any) => [version.version, version.is_default])).toEqual([
      [2, false],
      [1, true],
    ]);
    await portkey.prompts.partials.publish(partial.id, { version: 2 });
    expect(((await portkey.prompts.partials.retrieve(partial.id)) as any).string).toBe("Answer briefly.");
    const listed: any = await portkey.prompts.partials.list({ workspace_id: wsA.id } as any);
    expect(listed.data.map((item: any) => item.id)).toContain(partial.id);
    const badPartial = await sdkError(portkey.prompts.partials.update(partial.id, { string: "{{#open}}" }));
    expect(badPartial).toMatchObject({ status: 400, error: { param: "string" } });

    const prompt: any = await portkey.prompts.create({
      name: "Uses tone",
      workspace_id: wsA.id,
      string: JSON.stringify([{ role: "system", content: `{{#formal}}{{> ${partial.slug}}}{{/formal}}` }]),
      parameters: {},
    } as any);
    const blocked = await sdkError(portkey.prompts.partials.delete(partial.id));
    expect(blocked).toMatchObject({ status: 409, error: { code: "partial_in_use" } });
    expect(blocked.error.message).toContain(prompt.slug);

    // Once the published version no longer includes it, it may go.
    await portkey.prompts.update(prompt.id, { string: "no partial" });
    await portkey.prompts.publish(prompt.id, { version: 2 });
    await portkey.prompts.partials.delete(partial.id);
    expect((await sdkError(portkey.prompts.partials.retrieve(partial.id))).status).toBe(404);
    await portkey.prompts.delete(prompt.id);
  });
});

describe("collections", () => {
  it("nests collections in one workspace, and refuses to delete a non-empty one", async () => {
    const parent: any = await portkey.collections.create({ name: "Team", workspace_id: wsA.id });
    const child: any = await portkey.collections.create({ name: "Drafts", parent_collection_id: parent.id });
    expect(child).toMatchObject({ workspace_id: wsA.id, parent_collection_id: parent.id });
    const retrieved: any = await portkey.collections.retrieve(child.id);
    expect(retrieved.name).toBe("Drafts");

    const cycle = await call(gateway, admin, "PUT", `/v1/collections/${parent.id}`, { parent_collection_id: child.id });
    expect(cycle).toMatchObject({
      status: 400,
      body: { error: { param: "parent_collection_id", code: "collection_cycle" } },
    });
    const elsewhere = await call(gateway, admin, "POST", "/v1/collections", {
      name: "B's",
      workspace_id: wsB.id,
      parent_collection_id: parent.id,
    });
    expect(elsewhere).toMatchObject({ status: 400, body: { error: { param: "parent_collection_id" } } });
    const wrongWorkspace = await call(gateway, admin, "POST", "/v1/prompts", {
      name: "p",
      string: "hi",
      workspace_id: wsB.id,
      collection_id: child.id,
    });
    expect(wrongWorkspace).toMatchObject({ status: 400, body: { error: { param: "collection_id" } } });

    const notEmpty = await sdkError(portkey.collections.delete(parent.id));
    expect(notEmpty).toMatchObject({ status: 409, error: { code: "collection_not_empty" } });
    const prompt: any = await portkey.prompts.create({
      name: "in drafts",
      collection_id: child.id,
      string: "x",
      parameters: {},
    });
    expect((await sdkError(portkey.collections.delete(child.id))).status).toBe(409);
    await portkey.prompts.delete(prompt.id);
    await portkey.collections.update(child.id, { name: "Old drafts" });
    const listed: any = await portkey.collections.list({ workspace_id: wsA.id });
    expect(listed.data.map((item: any) => item.name)).toEqual(expect.arrayContaining(["Team", "Old drafts"]));
    await portkey.collections.delete(child.id);
    await portkey.collections.delete(parent.id);
    expect((await sdkError(portkey.collections.retrieve(parent.id))).status).toBe(404);
  });
});

describe("sharing", () => {
  it("shares a prompt with another workspace, which reads and forks it but cannot change it; unshare ends it", async () => {
    const source = await call(gateway, keyA, "POST", "/v1/prompts", {
      name: "Shared greeting",
      string: "Hello {{name}}",
      model: "gpt-4o-mini",
    });
    expect(source.status).toBe(201);
    const id = source.body.id;
    expect((await call(gateway, keyB, "GET", `/v1/prompts/${id}`)).status).toBe(404);

    const shared = await call(gateway, keyA, "POST", `/v2/prompts/${id}/share`, { workspace_ids: [wsB.slug] });
    expect(shared.status).toBe(200);
    expect(shared.body.shared_with).toEqual([wsB.id]);

    expect((await call(gateway, keyB, "GET", `/v1/prompts/${id}`)).body.string).toBe("Hello {{name}}");
    const sharedList = await call(gateway, keyB, "GET", "/v1/prompts?type=shared&show_prompt_share=true");
    expect(sharedList.body.data.map((prompt: any) => prompt.id)).toEqual([id]);
    expect(sharedList.body.data[0].shared_with).toEqual([wsB.id]);
    expect((await call(gateway, keyB, "GET", "/v1/prompts")).body.data.map((p: any) => p.id)).not.toContain(id);
    expect((await call(gateway, keyB, "PUT", `/v1/prompts/${id}`, { name: "mine now" })).status).toBe(403);
    expect((await call(gateway, keyB, "DELETE", `/v1/prompts/${id}`)).status).toBe(403);
    expect((await call(gateway, keyB, "POST", `/v2/prompts/${id}/unshare`, {})).status).toBe(403);

    const fork = await call(gateway, keyB, "POST", `/v2/prompts/${id}/fork`, { name: "B's greeting" });
    expect(fork.status).toBe(201);
    expect(fork.body).toMatchObject({
      workspace_id: wsB.id,
      prompt_version: 1,
      string: "Hello {{name}}",
      model: "gpt-4o-mini",
    });
    expect(fork.body.id).not.toBe(id);

    // Spec 7: the owner's workspace cannot be deleted while it shares the prompt.
    const deleteWorkspace = await call(gateway, admin, "DELETE", `/v1/admin/workspaces/${wsA.id}`);
    expect(deleteWorkspace.status).toBe(409);
    expect(deleteWorkspace.body.error.message).toMatch(/shared prompts/);

    const unshared = await call(gateway, keyA, "POST", `/v2/prompts/${id}/unshare`, {});
    expect(unshared.body.shared_with).toEqual([]);
    expect((await call(gateway, keyB, "GET", `/v1/prompts/${id}`)).status).toBe(404);
    expect((await call(gateway, keyB, "GET", "/v1/prompts?type=shared")).body.data).toEqual([]);

    const ownWorkspace = await call(gateway, keyA, "POST", `/v2/prompts/${id}/share`, { workspace_ids: [wsA.id] });
    expect(ownWorkspace).toMatchObject({ status: 400, body: { error: { param: "workspace_ids[0]" } } });
    const unknown = await call(gateway, keyA, "POST", `/v2/prompts/${id}/share`, { workspace_ids: ["ws_nope"] });
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: "workspace_not_found" } } });
  });

  it("shares and forks partials the same way", async () => {
    const partial = await call(gateway, keyA, "POST", "/v1/prompts/partials", { name: "Sign-off", string: "Regards" });
    expect(partial.status).toBe(201);
    const id = partial.body.id;
    expect((await call(gateway, keyB, "GET", `/v1/prompts/partials/${id}`)).status).toBe(404);
    await call(gateway, keyA, "POST", `/v2/prompts/partials/${id}/share`, { workspace_ids: [wsB.id] });
    const listed = await call(gateway, keyB, "GET", "/v1/prompts/partials?type=shared");
    expect(listed.body.data.map((item: any) => item.id)).toEqual([id]);
    const fork = await call(gateway, keyB, "POST", `/v2/prompts/partials/${id}/fork`, {});
    expect(fork).toMatchObject({ status: 201, body: { workspace_id: wsB.id, string: "Regards" } });
    await call(gateway, keyA, "POST", `/v2/prompts/partials/${id}/unshare`, { workspace_ids: [wsB.id] });
    expect((await call(gateway, keyB, "GET", `/v1/prompts/partials/${id}`)).status).toBe(404);
  });

  it("audits every change", async () => {
    const logs = await call(gateway, admin, "GET", "/v1/audit-logs?limit=100");
    const types = new Set(logs.body.data.map((entry: any) => `${entry.resource_type}:${entry.action}`));
    for (const expected of [
      "prompt:create",
      "prompt:update",
      "prompt:publish",
      "prompt:label",
      "prompt:share",
      "prompt:unshare",
      "prompt:delete",
      "prompt_partial:create",
      "label:create",
      "collection:create",
    ])
      expect(types).toContain(expected);
  });
});
