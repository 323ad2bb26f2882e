import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import type { Principal } from "../../core/auth/principal.ts";
import { Conflict, Forbidden, NotFound } from "../../core/control/errors.ts";
import { usablePartial, usablePrompt } from "../../core/control/prompts/access.ts";
import { createLabel, deleteLabel, listLabels } from "../../core/control/prompts/labels.ts";
import { createPartial, deletePartial, updatePartial } from "../../core/control/prompts/partials.ts";
import { fork, share, unshare } from "../../core/control/prompts/sharing.ts";
import {
  createPrompt,
  getPrompt,
  labelPromptVersion,
  publishPrompt,
  updatePrompt,
} from "../../core/control/prompts/service.ts";
import { assertDeletable, workspaceStore } from "../../core/control/workspaces/store.ts";
import type { Stores } from "../../core/store/ports.ts";

/**
 * The saved-prompt rules, on one store family (the services straight on the store): versions written once each
 * (a concurrent writer of the same number loses), publish and label pointers, the three default labels created
 * once however often they are read, a partial in use kept, sharing that widens who may use a prompt or partial
 * and blocks deleting its workspace, and fork.
 */
export function promptsContract(stores: () => Stores): void {
  async function setup() {
    const records = stores().records;
    const organisationId = `org_${randomUUID().slice(0, 8)}`;
    const workspace = (name: string) =>
      workspaceStore(records).create(organisationId, { name, slug: `${name}-${randomUUID().slice(0, 6)}` } as never);
    const a = await workspace("a");
    const b = await workspace("b");
    const principal = (workspaceId?: string): Principal => ({
      kind: "api_key",
      organisationId,
      keyId: `key_${randomUUID().slice(0, 8)}`,
      keyType: workspaceId ? "workspace" : "organisation",
      keySubType: "service",
      workspaceId,
      scopes: ["*"],
    });
    return {
      deps: { records, traceId: "trace-contract" },
      records,
      a,
      b,
      admin: principal(),
      inA: principal(a.id),
      inB: principal(b.id),
    };
  }

  it("writes each version once, publishes one, and moves label pointers", async () => {
    const { deps, inA } = await setup();
    const created = await createPrompt(deps, inA, { name: "Greeting", string: "Hi {{name}}", parameters: {} });
    const two = await updatePrompt(deps, inA, { prompt: created.id, changes: { string: "Hello {{name}}" } });
    expect(two).toMatchObject({ prompt_version: 2, default_version: 1 });
    // Two writers of version 3 from the same read: one loses with Conflict, the versions stay consistent.
    const results = await Promise.allSettled([
      updatePrompt(deps, inA, { prompt: created.id, changes: { string: "three a" } }),
      updatePrompt(deps, inA, { prompt: created.id, changes: { string: "three b" } }),
    ]);
    const failed = results.filter((result) => result.status === "rejected");
    expect(failed.length).toBeLessThanOrEqual(1);
    for (const failure of failed) expect((failure as PromiseRejectedResult).reason).toBeInstanceOf(Conflict);
    const latest = await getPrompt(deps, inA, { prompt: created.id, version: 3 });
    expect(["three a", "three b"]).toContain(latest.string);

    await publishPrompt(deps, inA, { prompt: created.id, version: 2 });
    expect((await getPrompt(deps, inA, { prompt: created.id })).string).toBe("Hello {{name}}");
    await labelPromptVersion(deps, inA, { prompt: created.id, version: 1, labelId: "staging" });
    const moved = await labelPromptVersion(deps, inA, { prompt: created.id, version: 2, labelId: "staging" });
    expect(moved.label_ids).toHaveLength(1);
    const read = await getPrompt(deps, inA, { prompt: created.id });
    expect(read.labels).toEqual([{ label_id: moved.label_ids[0], version: 2 }]);
    await expect(publishPrompt(deps, inA, { prompt: created.id, version: 99 })).rejects.toBeInstanceOf(NotFound);
  });

  it("creates the default labels once, and keeps a label in use", async () => {
    const { deps, admin, inA } = await setup();
    const [first, second] = await Promise.all([
      listLabels(deps, admin, { limit: 100, offset: 0 }),
      listLabels(deps, inA, { limit: 100, offset: 0 }),
    ]);
    expect(first.items.map((label) => label.name).sort()).toEqual(["development", "production", "staging"]);
    expect(second.total).toBe(3);
    const canary = await createLabel(deps, inA, { name: `canary-${randomUUID().slice(0, 4)}` });
    const prompt = await createPrompt(deps, inA, { name: "Labelled", string: "x", parameters: {} });
    await labelPromptVersion(deps, inA, { prompt: prompt.id, version: 1, labelId: canary.id });
    await expect(deleteLabel(deps, inA, { label: canary.id })).rejects.toBeInstanceOf(Conflict);
    await expect(deleteLabel(deps, admin, { label: "production" })).rejects.toBeInstanceOf(Conflict);
  });

  it("keeps a partial that a published prompt version includes", async () => {
    const { deps, inA } = await setup();
    const partial = await createPartial(deps, inA, {
      name: "Footer",
      slug: `footer-${randomUUID().slice(0, 6)}`,
      string: "Bye",
    });
    await updatePartial(deps, inA, { partial: partial.id, changes: { string: "Bye now" } });
    const prompt = await createPrompt(deps, inA, {
      name: "Uses footer",
      string: `Hi {{> ${partial.slug}}}`,
      parameters: {},
    });
    const refused = await deletePartial(deps, inA, { partial: partial.id }).catch((error) => error);
    expect(refused).toBeInstanceOf(Conflict);
    expect(refused.message).toContain(prompt.slug);
  });

  it("shares, forks and unshares; a sharing workspace cannot be deleted", async () => {
    const { deps, records, a, b, inA, inB } = await setup();
    const prompt = await createPrompt(deps, inA, {
      name: "Shared",
      string: "Hi {{name}}",
      parameters: { temperature: 0 },
    });
    const partial = await createPartial(deps, inA, { name: "Part", string: "p" });
    expect(await usablePrompt(records, inB, prompt.id)).toBeUndefined();
    expect(await usablePartial(records, inB, partial.slug!)).toBeUndefined();

    await share(deps, inA, { kind: "prompt", id: prompt.id, body: { workspace_ids: [b.id] } });
    await share(deps, inA, { kind: "partial", id: partial.id, body: { workspace_ids: [b.slug!] } });
    expect((await usablePrompt(records, inB, prompt.slug!))?.id).toBe(prompt.id);
    expect((await usablePartial(records, inB, partial.id))?.id).toBe(partial.id);
    await expect(assertDeletable(records, a as never)).rejects.toBeInstanceOf(Conflict);
    await expect(updatePrompt(deps, inB, { prompt: prompt.id, changes: { string: "taken" } })).rejects.toBeInstanceOf(
      Forbidden,
    );

    const forked = await fork(deps, inB, { kind: "prompt", id: prompt.id, body: {} });
    expect(forked).toMatchObject({
      workspace_id: b.id,
      prompt_version: 1,
      string: "Hi {{name}}",
      parameters: { temperature: 0 },
    });

    await unshare(deps, inA, { kind: "prompt", id: prompt.id, body: {} });
    expect(await usablePrompt(records, inB, prompt.id)).toBeUndefined();
    // The partial is still shared: the workspace stays undeletable until that ends too.
    await expect(assertDeletable(records, a as never)).rejects.toBeInstanceOf(Conflict);
    await unshare(deps, inA, { kind: "partial", id: partial.id, body: { workspace_ids: [b.id] } });
    await expect(assertDeletable(records, a as never)).resolves.toBeUndefined();
  });
}
