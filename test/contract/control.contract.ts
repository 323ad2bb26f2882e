import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { ApiKeyAuthenticator } from "../../core/auth/api-key-authenticator.ts";
import { type Resource, ResourceStore } from "../../core/control/resource-store.ts";
import { Conflict } from "../../core/control/errors.ts";
import type { Stores } from "../../core/store/ports.ts";
import { promptsContract } from "./prompts.contract.ts";

interface Thing extends Resource {
  name: string;
}

/**
 * The control plane's storage rules, on one store family: slugs unique per organisation, optimistic
 * concurrency by version, organisation isolation, newest-first pagination, API keys found by hash only; and
 * the saved-prompt rules (versions, labels, partials, sharing: prompts.contract.ts).
 */
export function controlContract(stores: () => Stores): void {
  const things = () => new ResourceStore<Thing>(stores().records, `THING${randomUUID().slice(0, 8)}`, "thg");

  it("creates with a unique slug, finds by id or slug, only within the organisation", async () => {
    const store = things();
    const created = await store.create("org_a", { slug: "alpha", name: "Alpha" });
    expect(created.id).toMatch(/^thg_/);
    expect((await store.get("org_a", created.id))?.name).toBe("Alpha");
    expect((await store.get("org_a", "alpha"))?.id).toBe(created.id);
    expect(await store.get("org_b", created.id)).toBeUndefined();
    expect(await store.get("org_b", "alpha")).toBeUndefined();
    const duplicate = await store.create("org_a", { slug: "alpha", name: "Again" }).catch((error) => error);
    expect(duplicate).toBeInstanceOf(Conflict);
    expect(duplicate).toMatchObject({ param: "slug", code: "conflict" });
    // Another organisation may use the same slug.
    expect((await store.create("org_b", { slug: "alpha", name: "B's alpha" })).organisationId).toBe("org_b");
  });

  it("updates by version, moves slugs, and frees them on delete", async () => {
    const store = things();
    const created = await store.create("org_a", { slug: "one", name: "One" });
    const renamed = await store.update(created, { slug: "uno", name: "Uno" });
    expect(renamed.version).toBe(2);
    expect(await store.get("org_a", "one")).toBeUndefined();
    expect((await store.get("org_a", "uno"))?.name).toBe("Uno");
    // A writer holding the old version loses.
    const stale = await store.update(created, { name: "stale" }).catch((error) => error);
    expect(stale).toBeInstanceOf(Conflict);
    expect((await store.get("org_a", created.id))?.name).toBe("Uno");
    await store.delete(renamed);
    expect(await store.get("org_a", renamed.id)).toBeUndefined();
    expect((await store.create("org_a", { slug: "uno", name: "Uno again" })).slug).toBe("uno");
  });

  it("with per-workspace slugs: a 409 only for a slug the workspace sees taken, lookups by the caller's workspace", async () => {
    const store = new ResourceStore<Thing>(
      stores().records,
      `WTHING${randomUUID().slice(0, 8)}`,
      "wth",
      [],
      "workspace",
    );
    const inA = await store.create("org_a", { slug: "shared", name: "A's", workspaceId: "ws_a" });
    // Another workspace's resource under the slug is not told apart from none: B may take the slug too.
    const inB = await store.create("org_a", { slug: "shared", name: "B's", workspaceId: "ws_b" });
    expect((await store.get("org_a", "shared", { workspaceId: "ws_a" }))?.id).toBe(inA.id);
    expect((await store.get("org_a", "shared", { workspaceId: "ws_b" }))?.id).toBe(inB.id);
    // Without a workspace, the organisation's alias: held by the first to claim it.
    expect((await store.get("org_a", "shared"))?.id).toBe(inA.id);
    // Taken in B's own namespace, and (for A) by its own resource: 409.
    for (const workspaceId of ["ws_a", "ws_b"]) {
      const again = await store.create("org_a", { slug: "shared", name: "again", workspaceId }).catch((e) => e);
      expect(again, workspaceId).toBeInstanceOf(Conflict);
    }
    // An organisation-level resource is every workspace's to see: its slug is taken for all of them.
    await store.create("org_a", { slug: "everyone", name: "Org's" });
    const hidden = await store.create("org_a", { slug: "everyone", name: "C's", workspaceId: "ws_c" }).catch((e) => e);
    expect(hidden).toBeInstanceOf(Conflict);
    expect((await store.get("org_a", "everyone", { workspaceId: "ws_c" }))?.name).toBe("Org's");
    // Renaming and deleting free both pointers; the alias is free for the next claimant.
    const renamed = await store.update(inA, { slug: "renamed" });
    expect(await store.get("org_a", "shared", { workspaceId: "ws_a" })).toBeUndefined();
    expect((await store.get("org_a", "renamed", { workspaceId: "ws_a" }))?.id).toBe(inA.id);
    await store.delete(renamed);
    expect(await store.get("org_a", "renamed")).toBeUndefined();
    const later = await store.create("org_a", { slug: "shared", name: "A's again", workspaceId: "ws_a" });
    expect((await store.get("org_a", "shared", { workspaceId: "ws_a" }))?.id).toBe(later.id);
    expect((await store.get("org_a", "shared", { workspaceId: "ws_b" }))?.id).toBe(inB.id);
    expect((await store.get("org_a", "shared"))?.id).toBe(later.id);
  });

  it("lists newest first across pages with cursors and filters", async () => {
    const store = things();
    for (let i = 0; i < 7; i++) {
      await store.create("org_list", { name: `n${i}`, workspaceId: i % 2 ? "ws_odd" : "ws_even" });
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.list("org_list", { limit: 3, cursor });
      seen.push(...page.items.map((item) => item.name));
      cursor = page.cursor;
    } while (cursor);
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);
    const odd = await store.list("org_list", { limit: 10, filter: (item) => item.workspaceId === "ws_odd" });
    expect(odd.items.map((item) => item.name).sort()).toEqual(["n1", "n3", "n5"]);
    await expect(store.list("org_list", { limit: 3, cursor: "not-a-cursor" })).rejects.toBeInstanceOf(RangeError);
  });

  it("stores API keys only as hashes and authenticates by hash", async () => {
    const records = stores().records;
    const { id, secret } = await createApiKey(records, {
      organisationId: "org_keys",
      name: "contract",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["logs.list"],
    });
    const stored = await records.get(`APIKEY#${id}`, "APIKEY");
    expect(JSON.stringify(stored)).not.toContain(secret);
    const principal = await new ApiKeyAuthenticator(records, 1000).authenticate(secret);
    expect(principal).toMatchObject({ organisationId: "org_keys", keyId: id, scopes: ["logs.list"] });
    await expect(new ApiKeyAuthenticator(records, 1000).authenticate(`${secret}x`)).rejects.toMatchObject({
      status: 401,
    });
  });

  describe("saved prompts: versions, labels, partials, sharing", () => promptsContract(stores));
}
