import { beforeAll, describe, expect, it } from "vitest";
import { loadRegexEngine } from "../../../../core/inference/routing/query.ts";

// Configs with $regex are compiled once the regex engine is loaded (callers await it; see routing/source.ts).
beforeAll(() => loadRegexEngine());
import { HttpError } from "../../../../core/http/errors.ts";
import { UpstreamError } from "../../../../core/providers/types.ts";
import { type LeafNode, compileConfig } from "../../../../core/inference/routing/config.ts";
import {
  type EngineIO,
  RoutingFailure,
  movesOn,
  pickWeighted,
  runStrategy,
} from "../../../../core/inference/routing/engine.ts";
import { backoffMs, nextRetryDelay, RETRY_TIMING, retryAfterMs } from "../../../../core/inference/routing/retry.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/** A conditional rule `{query, then}`. */
// biome-ignore lint/suspicious/noThenProperty: `then` is the config format's name for the chosen target.
const when = (query: unknown, target: string) => ({ query, then: target });

const trusted = parseTrustedHosts([]);
const compile = (raw: unknown) => compileConfig(raw, trusted);
const named = (name: string, extra: Record<string, unknown> = {}) => ({
  provider: "openai",
  api_key: name,
  name,
  ...extra,
});

/** A scripted io: each leaf (by api key) answers with its script, one entry per call (the last repeats). */
function scripted(
  scripts: Record<string, Array<number | UpstreamError>>,
  context = {},
): EngineIO & { calls: string[] } {
  const counts = new Map<string, number>();
  const calls: string[] = [];
  return {
    calls,
    signal: new AbortController().signal,
    queryContext: () => ({ metadata: {}, params: {}, url: { pathname: "/v1/chat/completions" }, ...context }),
    async call(leaf: LeafNode) {
      const key = leaf.apiKey!;
      calls.push(key);
      const index = counts.get(key) ?? 0;
      counts.set(key, index + 1);
      const script = scripts[key] ?? [200];
      const step = script[Math.min(index, script.length - 1)]!;
      if (step instanceof UpstreamError) throw step;
      if (step >= 200 && step < 300) return new Response(key, { status: step });
      throw new UpstreamError(step, `failed ${step}`, { headers: new Headers({ "retry-after-ms": "0" }) });
    },
  };
}

const failure = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RoutingFailure);
  return error as RoutingFailure;
};

describe("strategy engine", () => {
  it("fallback: in order, moving on over failures until one answers", async () => {
    const io = scripted({ a: [500], b: [429], c: [200] });
    const result = await runStrategy(
      compile({ strategy: { mode: "fallback" }, targets: [named("a"), named("b"), named("c")] }),
      io,
    );
    expect(await result.response.text()).toBe("c");
    expect(result.leaf.path).toBe("config.targets[2]");
    expect(io.calls).toEqual(["a", "b", "c"]);
  });

  it("fallback: on_status_codes limits moving on, but transport failures always move on and 499 never does", async () => {
    const config = compile({
      strategy: { mode: "fallback", on_status_codes: [429] },
      targets: [named("a"), named("b")],
    });
    const stopped = await failure(runStrategy(config, scripted({ a: [500] })));
    expect(stopped.error.status).toBe(500);
    expect(stopped.leaf.path).toBe("config.targets[0]");

    const timeout = new UpstreamError(408, "timed out", { transport: true });
    expect(await (await runStrategy(config, scripted({ a: [timeout] }))).response.text()).toBe("b");

    const io = scripted({ a: [new UpstreamError(499, "gone")] });
    await failure(runStrategy(compile({ strategy: { mode: "fallback" }, targets: [named("a"), named("b")] }), io));
    expect(io.calls).toEqual(["a"]);
    expect(movesOn(new UpstreamError(503, "x"), undefined)).toBe(true);
  });

  it("fallback: the last failure is reported when all fail", async () => {
    const last = await failure(
      runStrategy(
        compile({ strategy: { mode: "fallback" }, targets: [named("a"), named("b")] }),
        scripted({ a: [500], b: [502] }),
      ),
    );
    expect(last.error.status).toBe(502);
    expect(last.leaf.path).toBe("config.targets[1]");
  });

  it("retries per leaf on its codes, counting retries, then gives up", async () => {
    const io = scripted({ a: [503, 503, 200] });
    const result = await runStrategy(
      compile({ ...named("a"), retry: { attempts: 3, use_retry_after_header: true } }),
      io,
    );
    expect(result.retries).toBe(2);
    expect(io.calls).toEqual(["a", "a", "a"]);

    const exhausted = await failure(
      runStrategy(
        compile({ ...named("a"), retry: { attempts: 1, use_retry_after_header: true } }),
        scripted({ a: [503] }),
      ),
    );
    expect(exhausted.retries).toBe(1);
    const notRetried = scripted({ a: [400] });
    await failure(runStrategy(compile({ ...named("a"), retry: { attempts: 3 } }), notRetried));
    expect(notRetried.calls).toEqual(["a"]);
  });

  it("nested: a failing inner strategy lets the outer fallback move on; paths name the way through", async () => {
    const config = compile({
      strategy: { mode: "fallback" },
      targets: [
        { strategy: { mode: "fallback" }, targets: [named("a"), named("b")] },
        { strategy: { mode: "loadbalance" }, targets: [named("c", { weight: 0 }), named("d")] },
      ],
    });
    const io = scripted({ a: [500], b: [503], d: [200] });
    const result = await runStrategy(config, io);
    expect(result.leaf.path).toBe("config.targets[1].targets[1]");
    expect(io.calls).toEqual(["a", "b", "d"]);
  });

  it("conditional: first matching condition, else default, else a 400", async () => {
    const config = compile({
      strategy: {
        mode: "conditional",
        conditions: [
          when({ "metadata.tier": "gold" }, "gold"),
          when({ "params.model": { $regex: "^o1" } }, "reasoning"),
        ],
        default: "basic",
      },
      targets: [named("basic"), named("gold"), named("reasoning")],
    });
    const pick = async (context: object) => (await runStrategy(config, scripted({}, context))).leaf.apiKey;
    expect(await pick({ metadata: { tier: "gold" }, params: { model: "o1" } })).toBe("gold");
    expect(await pick({ metadata: { tier: "free" }, params: { model: "o1-mini" } })).toBe("reasoning");
    expect(await pick({ metadata: {}, params: { model: "gpt-4o" } })).toBe("basic");

    const noDefault = compile({
      strategy: { mode: "conditional", conditions: [when({ "metadata.tier": "gold" }, "gold")] },
      targets: [named("gold")],
    });
    await expect(runStrategy(noDefault, scripted({}))).rejects.toBeInstanceOf(HttpError);
  });

  it("a client abort during a retry wait ends at once", async () => {
    const controller = new AbortController();
    const io = scripted({ a: [new UpstreamError(503, "x", { headers: new Headers({ "retry-after-ms": "30000" }) })] });
    io.signal = controller.signal;
    const running = runStrategy(compile({ ...named("a"), retry: { attempts: 2, use_retry_after_header: true } }), io);
    setTimeout(() => controller.abort(), 20);
    const started = Date.now();
    const error = await failure(running);
    expect(error.error.status).toBe(499);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe("loadbalance selection", () => {
  it("follows the weights (3:1 over 4,000 draws within 3 points) and never picks weight 0", () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 4000; i++) counts[pickWeighted([3, 0, 1])]!++;
    expect(counts[1]).toBe(0);
    expect(counts[0]! / 4000).toBeGreaterThan(0.72);
    expect(counts[0]! / 4000).toBeLessThan(0.78);
  });

  it("over 400 requests through the engine, about 3 in 4 go to the heavier target", async () => {
    const config = compile({
      strategy: { mode: "loadbalance" },
      targets: [named("heavy", { weight: 3 }), named("light", { weight: 1 }), named("never", { weight: 0 })],
    });
    const io = scripted({});
    for (let i = 0; i < 400; i++) await runStrategy(config, io);
    const heavy = io.calls.filter((key) => key === "heavy").length;
    expect(io.calls).not.toContain("never");
    // Binomial(400, 0.75): sd ~ 8.7; 5 sd either side.
    expect(heavy).toBeGreaterThan(300 - 44);
    expect(heavy).toBeLessThan(300 + 44);
  });

  it("is exact at the edges of the random range", () => {
    expect(pickWeighted([1, 1], () => 0)).toBe(0);
    expect(pickWeighted([1, 1], () => 0.9999999)).toBe(1);
    expect(pickWeighted([0, 2, 0], () => 0.5)).toBe(1);
    expect(() => pickWeighted([0, 0])).toThrow(HttpError);
  });
});

describe("retry timing", () => {
  it("reads retry-after-ms, x-ms-retry-after-ms and retry-after (seconds or date)", () => {
    expect(retryAfterMs(new Headers({ "retry-after-ms": "150.5" }))).toBe(151);
    expect(retryAfterMs(new Headers({ "x-ms-retry-after-ms": "20" }))).toBe(20);
    expect(retryAfterMs(new Headers({ "retry-after": "2" }))).toBe(2000);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterMs(new Headers({ "retry-after": "Thu, 01 Jan 2026 00:00:03 GMT" }), now)).toBe(3000);
    expect(retryAfterMs(new Headers({ "retry-after": "soon" }))).toBeUndefined();
    expect(retryAfterMs(new Headers())).toBeUndefined();
  });

  it("backs off exponentially with jitter, within the caps", () => {
    expect(backoffMs(1, () => 0)).toBe(RETRY_TIMING.baseMs / 2);
    expect(backoffMs(1, () => 1)).toBe(RETRY_TIMING.baseMs);
    expect(backoffMs(3, () => 1)).toBe(RETRY_TIMING.baseMs * 4);
    expect(backoffMs(30, () => 1)).toBe(RETRY_TIMING.maxDelayMs);
    const policy = { attempts: 5, onStatusCodes: [429], useRetryAfterHeader: true };
    expect(nextRetryDelay(policy, 1, 429, new Headers({ "retry-after": "1" }), 0)).toBe(1000);
    expect(
      nextRetryDelay(policy, 1, 429, new Headers({ "retry-after": "1" }), RETRY_TIMING.maxTotalWaitMs - 500),
    ).toBeUndefined();
    expect(nextRetryDelay(policy, 6, 429, undefined, 0)).toBeUndefined();
    expect(nextRetryDelay(policy, 1, 500, undefined, 0)).toBeUndefined();
    expect(
      nextRetryDelay(
        { ...policy, useRetryAfterHeader: false },
        1,
        429,
        new Headers({ "retry-after": "30" }),
        0,
        () => 0,
      ),
    ).toBe(RETRY_TIMING.baseMs / 2);
  });
});

describe("continuation: the targets after the one that answered", () => {
  const continuing = (targets: unknown[], extra: Record<string, unknown> = {}) =>
    compile({ strategy: { mode: "fallback", on_stream_failure: "continue", ...extra }, targets });

  it("a fallback that continues streams hands back the rest, run in order with another io", async () => {
    const io = scripted({ b: [503] });
    const result = await runStrategy(continuing([named("a"), named("b"), named("c")]), io);
    expect(await result.response.text()).toBe("a");
    expect(result.rest).toBeDefined();
    const other = scripted({ b: [503] });
    const next = await result.rest!(other);
    // b fails before its first chunk, so c continues; after c there is nothing left.
    expect(other.calls).toEqual(["b", "c"]);
    expect(next.leaf.apiKey).toBe("c");
    expect(next.rest).toBeUndefined();
    expect(io.calls).toEqual(["a"]);
  });

  it("nothing after the last target, nothing without the option, and on_status_codes still decides", async () => {
    expect((await runStrategy(continuing([named("a")]), scripted({}))).rest).toBeUndefined();
    const plain = compile({ strategy: { mode: "fallback" }, targets: [named("a"), named("b")] });
    expect((await runStrategy(plain, scripted({}))).rest).toBeUndefined();
    const strict = continuing([named("a"), named("b"), named("c")], { on_status_codes: [429] });
    const result = await runStrategy(strict, scripted({}));
    const error = await failure(result.rest!(scripted({ b: [500] })));
    expect(error).toBeInstanceOf(RoutingFailure);
  });

  it("an inner fallback's rest goes on to the outer fallback's targets when it runs out", async () => {
    const config = continuing([
      { strategy: { mode: "fallback", on_stream_failure: "continue" }, targets: [named("a"), named("b")] },
      named("c"),
    ]);
    const result = await runStrategy(config, scripted({}));
    const io = scripted({ b: [503] });
    const next = await result.rest!(io);
    expect(io.calls).toEqual(["b", "c"]);
    expect(next.leaf.apiKey).toBe("c");
  });

  it("is compiled for fallbacks only, and marked on the root", () => {
    expect(continuing([named("a"), named("b")]).hasStreamContinuation).toBe(true);
    expect(compile({ strategy: { mode: "fallback" }, targets: [named("a")] }).hasStreamContinuation).toBeUndefined();
    expect(() =>
      compile({ strategy: { mode: "loadbalance", on_stream_failure: "continue" }, targets: [named("a")] }),
    ).toThrow(/fallback strategies only/);
  });
});

describe("affinity: the target where the conversation lives", () => {
  const prefer = (key: string) => async (leaf: LeafNode) => leaf.apiKey === key;

  it("goes first in a fallback, the others keep their order after it, and it is left when it fails", async () => {
    const config = compile({ strategy: { mode: "fallback" }, targets: [named("a"), named("b"), named("c")] });
    const io = { ...scripted({}), prefers: prefer("b") };
    expect((await runStrategy(config, io)).leaf.apiKey).toBe("b");
    const failing = { ...scripted({ b: [503] }), prefers: prefer("b") };
    expect((await runStrategy(config, failing)).leaf.apiKey).toBe("a");
    expect(failing.calls).toEqual(["b", "a"]);
  });

  it("is chosen by a loadbalance (inside nested targets too), never over a condition", async () => {
    const balanced = compile({
      strategy: { mode: "loadbalance" },
      targets: [named("a"), { strategy: { mode: "fallback" }, targets: [named("b"), named("c")] }],
    });
    const io = { ...scripted({}), prefers: prefer("c"), random: () => 0 };
    expect((await runStrategy(balanced, io)).leaf.apiKey).toBe("c");
    const conditional = compile({
      strategy: { mode: "conditional", conditions: [when({ "metadata.tier": "gold" }, "a")], default: "b" },
      targets: [named("a"), named("b")],
    });
    const gold = { ...scripted({}, { metadata: { tier: "gold" } }), prefers: prefer("b") };
    expect((await runStrategy(conditional, gold)).leaf.apiKey).toBe("a");
  });
});
