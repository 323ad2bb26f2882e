import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { costOf } from "../../core/inference/catalog/cost.ts";
import { HttpError } from "../../core/http/errors.ts";
import { PolicyEnforcer } from "../../core/inference/policies/enforcer.ts";
import {
  type PolicyResource,
  type PolicySubject,
  counterKeyOf,
  policyStore,
} from "../../core/inference/policies/model.ts";
import type { Stores } from "../../core/store/ports.ts";

/**
 * Policy enforcement against a real store family (the same suite runs on SQLite and on dynalite): exact
 * admission under concurrency, cost limits from catalog prices, window resets, raised limits, conditions.
 * The clock is injected and set in the future (counters expire against the real clock).
 */

type Fields = Partial<PolicyResource> & Pick<PolicyResource, "family" | "type">;

const DAY = 86_400_000;
/** Midnight UTC two days ahead, plus 30 s. */
const future = () => (Math.floor(Date.now() / DAY) + 2) * DAY + 30_000;

export function policiesContract(getStores: () => Stores) {
  async function setup(fields: Fields, start = future()) {
    const stores = getStores();
    const organisationId = `org_${randomUUID()}`;
    const clock = { now: start };
    const enforcer = new PolicyEnforcer(stores.records, stores.counters, { now: () => clock.now });
    const store = policyStore(stores.records, fields.family);
    const policy = await store.create(organisationId, {
      conditions: [],
      groupBy: [],
      status: "active",
      name: "test policy",
      ...fields,
    });
    const subject = (extra: Partial<PolicySubject> = {}): PolicySubject => ({
      organisationId,
      apiKeyId: "key_a",
      workspaceId: "ws_1",
      provider: "openai",
      model: "gpt-4o-mini",
      ...extra,
    });
    const raise = async (changes: Partial<PolicyResource>) => {
      const current = (await store.get(organisationId, policy.id))!;
      const updated = await store.update(current, changes);
      enforcer.changed(organisationId, updated);
    };
    return { stores, enforcer, policy, subject, clock, raise, organisationId };
  }

  const refusal = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (thrown) => thrown,
    );
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  };

  describe("policies (enforcement through Counters)", () => {
    it("admits exactly 100 of 500 concurrent requests against a request rate limit of 100", async () => {
      const { enforcer, subject } = await setup({ family: "rate_limits", type: "requests", unit: "rpm", value: 100 });
      const results = await Promise.allSettled(Array.from({ length: 500 }, () => enforcer.admit(subject())));
      const admitted = results.filter((result) => result.status === "fulfilled");
      const refused = results.filter((result) => result.status === "rejected") as PromiseRejectedResult[];
      expect(admitted).toHaveLength(100);
      expect(refused).toHaveLength(400);
      const error = refused[0]!.reason as HttpError;
      expect(error.status).toBe(429);
      expect(error.code).toBe("rate_limit_exceeded");
      expect(error.type).toBe("rate_limit_error");
      expect(error.message).toContain("test policy");
      expect(error.headers).toMatchObject({
        "retry-after": "30",
        "x-ratelimit-limit": "100",
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": "30",
      });
    });

    it("admits exactly 100 of 500 concurrent requests against a requests usage limit of 100", async () => {
      const { enforcer, subject } = await setup({
        family: "usage_limits",
        type: "requests",
        creditLimit: 100,
        periodicReset: "monthly",
      });
      const results = await Promise.allSettled(Array.from({ length: 500 }, () => enforcer.admit(subject())));
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(100);
      const refused = results.find((result) => result.status === "rejected") as PromiseRejectedResult;
      expect((refused.reason as HttpError).code).toBe("usage_limit_exceeded");
    });

    it("stops a key after the expected number of calls given the catalog price (cost limit)", async () => {
      const usage = { prompt_tokens: 1200, completion_tokens: 800, total_tokens: 2000 };
      const perCall = costOf("openai", "gpt-4o-mini", usage);
      expect(perCall.priced).toBe(true);
      const { enforcer, subject } = await setup({
        family: "usage_limits",
        type: "cost",
        creditLimit: perCall.total * 2.5,
        groupBy: ["api_key"],
      });
      let calls = 0;
      for (let i = 0; i < 10; i++) {
        let admission: Awaited<ReturnType<PolicyEnforcer["admit"]>>;
        try {
          admission = await enforcer.admit(subject());
        } catch (error) {
          expect((error as HttpError).code).toBe("usage_limit_exceeded");
          expect((error as HttpError).message).toContain("test policy");
          break;
        }
        expect(admission.needsUsage).toBe(true);
        calls += 1;
        await admission.settle({ tokens: usage.total_tokens, costUsd: perCall.total });
      }
      expect(calls).toBe(3);
      // Another key has its own group.
      await expect(enforcer.admit(subject({ apiKeyId: "key_b" }))).resolves.toBeDefined();
    });

    it("reserves a request's estimate at admission and settles its real usage once", async () => {
      const { enforcer, subject, stores, policy } = await setup({
        family: "usage_limits",
        type: "tokens",
        creditLimit: 1000,
        periodicReset: "none",
      });
      const counter = counterKeyOf(policy.id, "all", 0);
      const admission = await enforcer.admit(subject(), () => ({ tokens: 300, costUsd: 0 }));
      expect(await stores.counters.get(counter)).toBe(300);
      await admission.settle({ tokens: 120 });
      expect(await stores.counters.get(counter)).toBe(120);
      await admission.settle({ tokens: 120 }); // a second settlement changes nothing
      expect(await stores.counters.get(counter)).toBe(120);
      // Nothing used (a failure before any usage): the whole reservation is released.
      await (await enforcer.admit(subject(), async () => ({ tokens: 300, costUsd: 0 }))).settle({});
      expect(await stores.counters.get(counter)).toBe(120);
      // Used more than estimated: the difference is added.
      await (await enforcer.admit(subject(), () => ({ tokens: 10, costUsd: 0 }))).settle({ tokens: 50 });
      expect(await stores.counters.get(counter)).toBe(170);
    });

    it("admits while the group is below its limit: 200 concurrent requests pass it by at most one", async () => {
      const { enforcer, subject, stores, policy } = await setup({
        family: "usage_limits",
        type: "tokens",
        creditLimit: 1000,
        periodicReset: "none",
      });
      const results = await Promise.allSettled(
        Array.from({ length: 200 }, () => enforcer.admit(subject(), () => ({ tokens: 130, costUsd: 0 }))),
      );
      const admitted = results.filter((result) => result.status === "fulfilled");
      // Reserved 0, 130, ..., 910 when admitted: 8 found the group below 1,000; the 9th found 1,040.
      expect(admitted).toHaveLength(8);
      const refused = results.find((result) => result.status === "rejected") as PromiseRejectedResult;
      expect((refused.reason as HttpError).code).toBe("usage_limit_exceeded");
      const counter = counterKeyOf(policy.id, "all", 0);
      await Promise.all(admitted.map((result) => result.value.settle({ tokens: 102 })));
      expect(await stores.counters.get(counter)).toBe(8 * 102);
    });

    it("reserves the priced estimate against a cost limit, and admits one request larger than the budget", async () => {
      const { enforcer, subject, stores, policy } = await setup({
        family: "usage_limits",
        type: "cost",
        creditLimit: 1,
        periodicReset: "none",
      });
      const counter = counterKeyOf(policy.id, "all", 0);
      const large = await enforcer.admit(subject(), () => ({ tokens: 0, costUsd: 2.5 }));
      expect(await stores.counters.get(counter)).toBe(2_500_000); // micro-dollars
      await refusal(enforcer.admit(subject(), () => ({ tokens: 0, costUsd: 0.01 })));
      await large.settle({ costUsd: 0.4 });
      expect(await stores.counters.get(counter)).toBe(400_000);
      await expect(enforcer.admit(subject(), () => ({ tokens: 0, costUsd: 0.01 }))).resolves.toBeDefined();
    });

    it("rolls back a reservation when another policy refuses, and checks the limit when estimating fails", async () => {
      const first = await setup({ family: "usage_limits", type: "tokens", creditLimit: 1000, periodicReset: "none" });
      await policyStore(first.stores.records, "rate_limits").create(first.organisationId, {
        family: "rate_limits",
        type: "requests",
        unit: "rph",
        value: 1,
        conditions: [],
        groupBy: [],
        status: "active",
      });
      first.enforcer.forget();
      const counter = counterKeyOf(first.policy.id, "all", 0);
      const estimate = () => ({ tokens: 200, costUsd: 0 });
      await first.enforcer.admit(first.subject(), estimate);
      await refusal(first.enforcer.admit(first.subject(), estimate));
      expect(await first.stores.counters.get(counter)).toBe(200);

      const other = await setup({ family: "usage_limits", type: "tokens", creditLimit: 100, periodicReset: "none" });
      const failing = () => Promise.reject(new Error("no estimate"));
      const admission = await other.enforcer.admit(other.subject(), failing);
      await admission.settle({ tokens: 150 });
      await refusal(other.enforcer.admit(other.subject(), failing));
    });

    it("starts again at the window edge", async () => {
      const start = future() - 30_000 + 59_900; // 100 ms before the end of a minute
      const { enforcer, subject, clock } = await setup(
        { family: "rate_limits", type: "requests", unit: "rpm", value: 2 },
        start,
      );
      await enforcer.admit(subject());
      await enforcer.admit(subject());
      const error = await refusal(enforcer.admit(subject()));
      expect(error.headers["retry-after"]).toBe("1");
      clock.now = start + 100; // the next minute
      const admitted = await enforcer.admit(subject());
      expect(admitted.headers).toMatchObject({ "x-ratelimit-limit": "2", "x-ratelimit-remaining": "1" });
    });

    it("resets a daily token limit at midnight of its time zone", async () => {
      // In January Paris is UTC+1: 22:30 UTC is 23:30 there.
      const start = Date.UTC(new Date().getUTCFullYear() + 1, 0, 15, 22, 30);
      const { enforcer, subject, clock } = await setup(
        { family: "usage_limits", type: "tokens", creditLimit: 100, periodicReset: "daily", timezone: "Europe/Paris" },
        start,
      );
      const admission = await enforcer.admit(subject());
      await admission.settle({ tokens: 150 });
      await refusal(enforcer.admit(subject()));
      clock.now = start + 29 * 60_000; // 22:59 UTC = 23:59 Paris: same local day
      await refusal(enforcer.admit(subject()));
      clock.now = start + 31 * 60_000; // 23:01 UTC = 00:01 Paris: a new local day (UTC's starts an hour later)
      await expect(enforcer.admit(subject())).resolves.toBeDefined();
    });

    it("re-enables an exhausted group at once when the limit is raised", async () => {
      const { enforcer, subject, raise } = await setup({
        family: "usage_limits",
        type: "tokens",
        creditLimit: 100,
        periodicReset: "none",
      });
      await (await enforcer.admit(subject())).settle({ tokens: 150 });
      const error = await refusal(enforcer.admit(subject()));
      expect(error.code).toBe("usage_limit_exceeded");
      await raise({ creditLimit: 1000 });
      await expect(enforcer.admit(subject())).resolves.toBeDefined();

      const requests = await setup({ family: "usage_limits", type: "requests", creditLimit: 1, periodicReset: "none" });
      await requests.enforcer.admit(requests.subject());
      await refusal(requests.enforcer.admit(requests.subject()));
      await requests.raise({ creditLimit: 2 });
      await expect(requests.enforcer.admit(requests.subject())).resolves.toBeDefined();
      await refusal(requests.enforcer.admit(requests.subject()));
    });

    it("applies a policy another process added within refreshMs, also where the process sat idle meanwhile", async () => {
      // A policy that matches nothing loads the organisation's policies into this process's cache.
      const { stores, enforcer, subject, clock, organisationId } = await setup({
        family: "rate_limits",
        type: "requests",
        unit: "rph",
        value: 0,
        conditions: [{ key: "model", value: ["not-this-model"] }],
      });
      await enforcer.admit(subject());
      // Another process (another Lambda instance) adds a policy that refuses everything; this one hears nothing.
      await policyStore(stores.records, "rate_limits").create(organisationId, {
        conditions: [],
        groupBy: [],
        status: "active",
        name: "added elsewhere",
        type: "requests",
        unit: "rph",
        value: 0,
      });
      // This process handled no request meanwhile: its next one, past the 3 s, is refused, not admitted by the
      // policies it loaded before.
      clock.now += 3001;
      expect((await refusal(enforcer.admit(subject()))).message).toContain("added elsewhere");
    });

    it("leaves requests its conditions do not match untouched", async () => {
      const { enforcer, subject, stores, policy } = await setup({
        family: "rate_limits",
        type: "requests",
        unit: "rph",
        value: 0,
        conditions: [
          { key: "model", value: ["gpt-4o"] },
          { key: "metadata.env", value: ["*"], excludes: ["dev"] },
        ],
      });
      const untouched = await enforcer.admit(subject());
      expect(untouched.headers).toEqual({});
      await enforcer.admit(subject({ model: "gpt-4o", metadata: { env: "dev" } }));
      await enforcer.admit(subject({ model: "gpt-4o" })); // no metadata.env: `*` needs a value
      await refusal(enforcer.admit(subject({ model: "gpt-4o", metadata: { env: "prod" } })));
      // Nothing was counted for the requests that did not match: no group was ever seen.
      const seen = await stores.records.query({ partition: `POLUSE#${policy.id}#0` });
      expect(seen.items).toEqual([]);
    });

    it("rolls back the other policies' counts when one refuses", async () => {
      const first = await setup({ family: "rate_limits", type: "requests", unit: "rph", value: 10 });
      const store = policyStore(first.stores.records, "rate_limits");
      await store.create(first.organisationId, {
        family: "rate_limits",
        type: "requests",
        unit: "rph",
        value: 1,
        conditions: [{ key: "provider", value: ["openai"] }],
        groupBy: [],
        status: "active",
      });
      first.enforcer.forget();
      const admitted = await first.enforcer.admit(first.subject());
      expect(admitted.headers).toMatchObject({ "x-ratelimit-limit": "1", "x-ratelimit-remaining": "0" });
      await refusal(first.enforcer.admit(first.subject()));
      await refusal(first.enforcer.admit(first.subject()));
      // Only the admitted request counts under the looser policy: 9 left there.
      const other = await first.enforcer.admit(first.subject({ provider: "anthropic" }));
      expect(other.headers).toMatchObject({ "x-ratelimit-limit": "10", "x-ratelimit-remaining": "8" });
    });
  });
}
