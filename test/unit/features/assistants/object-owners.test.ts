import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { AssistantObjectOwners } from "../../../../core/features/assistants/object-owners.ts";
import { onBothStoreFamilies } from "../../../helpers/both-store-families.ts";

/** The owners of Assistants API objects and the once-per-run usage mark, on both platforms' Records. */

const A = { organisationId: "org_1", workspaceId: "ws_a" };
const B = { organisationId: "org_1", workspaceId: "ws_b" };

onBothStoreFamilies("assistant-owners", (stores) => {
  const owners = () => new AssistantObjectOwners(stores().records);

  it("records the first owner only, refuses others, and forgets deleted objects", async () => {
    const id = `asst_${randomUUID()}`;
    expect(await owners().ownedByAnother(id, B)).toBe(false);
    await owners().claim(id, "assistant", A);
    await owners().claim(id, "assistant", B);
    expect(await owners().ownerOf(id)).toEqual(A);
    expect(await owners().ownedByAnother(id, A)).toBe(false);
    expect(await owners().ownedByAnother(id, B)).toBe(true);
    await owners().release(id);
    expect(await owners().ownerOf(id)).toBeUndefined();
  });

  it("marks a run's usage logged once, even under concurrent calls", async () => {
    const run = `run_${randomUUID()}`;
    await owners().claim(run, "run", A);
    const marks = await Promise.all(Array.from({ length: 5 }, () => owners().markUsageLogged(run, A)));
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect(await owners().markUsageLogged(run, A)).toBe(false);
    expect(await owners().ownerOf(run)).toEqual(A);
  });

  it("marks a run it never saw created, recording the caller as its owner", async () => {
    const run = `run_${randomUUID()}`;
    const marks = await Promise.all([owners().markUsageLogged(run, A), owners().markUsageLogged(run, A)]);
    expect(marks.filter(Boolean)).toHaveLength(1);
    expect(await owners().ownerOf(run)).toEqual(A);
  });

  it("ignores ids longer than a provider's", async () => {
    const long = `asst_${"x".repeat(300)}`;
    await owners().claim(long, "assistant", A);
    expect(await owners().ownerOf(long)).toBeUndefined();
    expect(await owners().markUsageLogged(long, A)).toBe(false);
  });
});
