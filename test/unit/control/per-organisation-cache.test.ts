import { describe, expect, it } from "vitest";
import { PerOrganisationCache } from "../../../core/control/per-organisation-cache.ts";

describe("PerOrganisationCache", () => {
  it("keeps a value per organisation and workspace until its time is up", () => {
    const cache = new PerOrganisationCache<string>(1_000);
    cache.set("org_a", "ws_1", "a1", 0);
    cache.set("org_a", "ws_2", "a2", 0);
    cache.set("org_b", "ws_1", "b1", 500);
    expect(cache.get("org_a", "ws_1", 999)).toBe("a1");
    expect(cache.get("org_a", "ws_2", 999)).toBe("a2");
    expect(cache.get("org_b", "ws_1", 999)).toBe("b1");
    expect(cache.get("org_b", "ws_2", 999)).toBeUndefined();
    expect(cache.get("org_a", "ws_1", 1_000)).toBeUndefined();
    expect(cache.get("org_b", "ws_1", 1_000)).toBe("b1");
  });

  it("forgets one organisation's entries only, and a failed load only if it is still the entry", () => {
    const cache = new PerOrganisationCache<string>(1_000);
    cache.set("org_a", "ws_1", "a1", 0);
    cache.set("org_b", "ws_1", "b1", 0);
    cache.forget("org_a");
    expect(cache.get("org_a", "ws_1", 1)).toBeUndefined();
    expect(cache.get("org_b", "ws_1", 1)).toBe("b1");
    cache.deleteIf("org_b", "ws_1", "older");
    expect(cache.get("org_b", "ws_1", 1)).toBe("b1");
    cache.deleteIf("org_b", "ws_1", "b1");
    expect(cache.get("org_b", "ws_1", 1)).toBeUndefined();
  });

  it("starts over when full, so it cannot grow without bound", () => {
    const cache = new PerOrganisationCache<number>(1_000, 3);
    for (let index = 0; index < 3; index++) cache.set("org", `ws_${index}`, index, 0);
    cache.set("org", "ws_0", 10, 0);
    expect(cache.get("org", "ws_2", 1)).toBe(2);
    cache.set("org", "ws_3", 3, 0);
    expect(cache.get("org", "ws_0", 1)).toBeUndefined();
    expect(cache.get("org", "ws_3", 1)).toBe(3);
  });
});
