import { describe, expect, it } from "vitest";
import { compareSequence } from "../../../core/analytics/log-batch.ts";
import { fromImage, toImage } from "../../../core/platform/aws/stream-image.ts";

describe("DynamoDB stream images", () => {
  it("reads every attribute type of a NewImage", () => {
    expect(
      fromImage({
        s: { S: "text" },
        n: { N: "-12.5" },
        big: { N: "1700000000" },
        yes: { BOOL: true },
        none: { NULL: true },
        map: { M: { inner: { L: [{ N: "1" }, { S: "two" }, { M: {} }] } } },
        strings: { SS: ["a", "b"] },
        numbers: { NS: ["1", "2.5"] },
        binary: { B: "AAE=" },
        binaries: { BS: ["AAE="] },
      }),
    ).toEqual({
      s: "text",
      n: -12.5,
      big: 1_700_000_000,
      yes: true,
      none: null,
      map: { inner: [1, "two", {}] },
      strings: ["a", "b"],
      numbers: [1, 2.5],
      binary: "AAE=",
      binaries: ["AAE="],
    });
  });

  it("round-trips JSON-like values, leaving out undefined", () => {
    const log = {
      id: "log_1",
      status: 200,
      cost: 0.000123,
      stream: false,
      error: { message: "x", code: null },
      metadata: { team: "a" },
      usage: { promptTokens: 3, completionTokens: 0 },
      list: [1, "a", undefined, { b: true }],
      skipped: undefined,
    };
    const { skipped, list, ...rest } = log;
    expect(fromImage(toImage(log))).toEqual({ ...rest, list: [1, "a", { b: true }] });
    expect(toImage({ n: 1, s: "x" })).toEqual({ n: { N: "1" }, s: { S: "x" } });
  });

  it("rejects an unknown attribute type", () => {
    expect(() => fromImage({ odd: { X: "1" } as never })).toThrow(/unknown DynamoDB attribute type X/);
  });
});

describe("stream sequence numbers", () => {
  it("order as decimal numbers of any length", () => {
    expect(compareSequence("111", "222")).toBeLessThan(0);
    expect(compareSequence("999", "1000")).toBeLessThan(0);
    expect(compareSequence("4421584500000000017450439092", "4421584500000000017450439091")).toBeGreaterThan(0);
    expect(compareSequence("300", "300")).toBe(0);
  });
});
