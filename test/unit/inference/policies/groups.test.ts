import { describe, expect, it } from "vitest";
import { compilePolicy, counterKeyOf, type PolicyResource } from "../../../../core/inference/policies/model.ts";

const policy = (groupBy: string[]): PolicyResource =>
  ({
    id: "pol_1",
    organisationId: "org_1",
    family: "rate_limits",
    conditions: [],
    groupBy,
    type: "requests",
    unit: "rpm",
    value: 10,
    status: "active",
  }) as unknown as PolicyResource;

const subject = (apiKeyId: string, userId?: string) => ({ organisationId: "org_1", apiKeyId, userId });

describe("policy groups and counter keys", () => {
  it("gives the same group for the same value, with the counter key of each window", () => {
    const compiled = compilePolicy(policy(["api_key"]));
    const first = compiled.group(subject("key_a"));
    expect(compiled.group(subject("key_a"))).toBe(first);
    expect(first).toMatchObject({ key: "api_key=key_a", values: { api_key: "key_a" } });
    const other = compiled.group(subject("key b/é"));
    expect(other).not.toBe(first);
    expect(other.key).toBe(`api_key=${encodeURIComponent("key b/é")}`);
    expect(compiled.counterKey(first, 60)).toBe(counterKeyOf("pol_1", "api_key=key_a", 60));
    expect(compiled.counterKey(first, 60)).toBe(compiled.counterKey(first, 60));
    expect(compiled.counterKey(first, 120)).toBe(counterKeyOf("pol_1", "api_key=key_a", 120));
    expect(compiled.counterKey(other, 120)).toBe(counterKeyOf("pol_1", other.key, 120));
  });

  it("keeps a missing value apart, and builds groups of several keys for each request", () => {
    const byUser = compilePolicy(policy(["user_id"]));
    expect(byUser.group(subject("key_a")).values).toEqual({ user_id: null });
    expect(byUser.group(subject("key_a", "usr_1")).key).toBe("user_id=usr_1");
    expect(byUser.group(subject("key_a")).key).toBe("user_id=");
    const byBoth = compilePolicy(policy(["api_key", "user_id"]));
    const group = byBoth.group(subject("key_a", "usr_1"));
    expect(group).toMatchObject({ key: "api_key=key_a&user_id=usr_1" });
    expect(byBoth.counterKey(group, 60)).toBe(counterKeyOf("pol_1", group.key, 60));
    expect(compilePolicy(policy([])).group(subject("key_a")).key).toBe("all");
  });
});

describe("policy groups by long values", () => {
  it("are built each time, not kept, and still name the same counter", () => {
    const compiled = compilePolicy(policy(["api_key"]));
    const long = "k".repeat(500);
    const first = compiled.group(subject(long));
    const again = compiled.group(subject(long));
    expect(again).not.toBe(first);
    expect(again.key).toBe(first.key);
    expect(compiled.counterKey(again, 60)).toBe(compiled.counterKey(first, 60));
  });
});
