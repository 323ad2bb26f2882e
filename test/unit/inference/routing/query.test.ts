import { beforeAll, describe, expect, it } from "vitest";
import { type QueryContext, compileQuery, loadRegexEngine } from "../../../../core/inference/routing/query.ts";

beforeAll(() => loadRegexEngine());

const context: QueryContext = {
  metadata: { _user: "alice", tier: "gold", level: "7", "dotted.key": "yes" },
  params: {
    model: "gpt-4o-mini",
    temperature: 0.7,
    max_tokens: 100,
    tools: [{ type: "function" }],
    stream_options: { include_usage: true },
    tags: ["a", "b"],
  },
  url: { pathname: "/v1/chat/completions" },
};

const holds = (query: unknown) => compileQuery(query, "q")(context);

describe("conditional query language", () => {
  it.each([
    [{ "metadata._user": "alice" }, true],
    [{ "metadata._user": "bob" }, false],
    [{ "metadata._user": { $eq: "alice" } }, true],
    [{ "metadata._user": { $ne: "alice" } }, false],
    [{ "metadata.missing": { $ne: "x" } }, true],
    [{ "metadata.missing": "x" }, false],
    [{ "metadata.level": { $gt: 5 } }, true],
    [{ "metadata.level": { $gte: 7, $lt: 8 } }, true],
    [{ "metadata.level": { $lte: 6 } }, false],
    [{ "metadata.level": 7 }, true],
    [{ "metadata.missing": { $gt: 1 } }, false],
    [{ "params.temperature": { $gt: 0.5 } }, true],
    [{ "params.temperature": { $lt: 0.5 } }, false],
    [{ "params.model": { $in: ["gpt-4o", "gpt-4o-mini"] } }, true],
    [{ "params.model": { $nin: ["gpt-4o", "gpt-4o-mini"] } }, false],
    [{ "params.missing": { $nin: ["x"] } }, true],
    [{ "params.missing": { $in: ["x"] } }, false],
    [{ "params.tags": { $in: ["b", "z"] } }, true],
    [{ "params.model": { $regex: "^gpt-4o" } }, true],
    [{ "params.model": { $regex: "^o1" } }, false],
    [{ "params.max_tokens": { $regex: "100" } }, false],
    [{ "params.stream_options.include_usage": true }, true],
    [{ "params.tools.0.type": "function" }, true],
    [{ "metadata.dotted.key": "yes" }, true],
    [{ "url.pathname": "/v1/chat/completions" }, true],
    [{ "url.pathname": { $regex: "embeddings$" } }, false],
    [{ "metadata.tier": { $gt: "f" } }, true],
    [{ "metadata._user": "alice", "params.model": "gpt-4o" }, false],
    [{ $and: [{ "metadata._user": "alice" }, { "params.temperature": { $gte: 0.7 } }] }, true],
    [{ $or: [{ "metadata._user": "bob" }, { "params.model": { $regex: "mini" } }] }, true],
    [
      {
        $or: [
          { "metadata._user": "bob" },
          { $and: [{ "metadata.tier": "gold" }, { "params.temperature": { $gt: 1 } }] },
        ],
      },
      false,
    ],
  ])("%j -> %s", (query, expected) => {
    expect(holds(query)).toBe(expected);
  });

  it.each([
    [[], "q"],
    [{ model: "x" }, "q.model"],
    [{ $not: {} }, "q.$not"],
    [{ $and: [] }, "q.$and"],
    [{ $or: [{ "params.model": { $gt: {} } }] }, "q.$or[0].params.model.$gt"],
    [{ "params.model": { $in: "x" } }, "q.params.model.$in"],
    [{ "params.model": { $regex: "[" } }, "q.params.model.$regex"],
    [{ "params.model": { $eq: 1, plain: 2 } }, "q.params.model"],
  ])("rejects %j naming %s", (query, param) => {
    expect(() => compileQuery(query, "q")).toThrow(expect.objectContaining({ status: 400, param }));
  });
});

describe("$regex runs in linear time", () => {
  it("answers at once on a pattern that backtracks catastrophically in JavaScript", () => {
    // Before: a JavaScript RegExp took over a second on 29 characters, four times longer for every two more.
    const matches = compileQuery({ "params.model": { $regex: "^(a+)+$" } }, "q");
    const started = performance.now();
    expect(matches({ metadata: {}, params: { model: `${"a".repeat(5_000)}!` }, url: { pathname: "/" } })).toBe(false);
    expect(matches({ metadata: {}, params: { model: "aaaa" }, url: { pathname: "/" } })).toBe(true);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it("refuses look-around and back-references (not RE2) with a 400", () => {
    for (const pattern of ["(?=a)b", "(a)\\1"]) {
      expect(() => compileQuery({ "params.model": { $regex: pattern } }, "q")).toThrow(/RE2 syntax/);
    }
  });
});
