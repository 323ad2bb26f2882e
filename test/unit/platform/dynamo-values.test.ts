import { describe, expect, it } from "vitest";
import { marshallItem, unmarshallItem } from "../../../core/platform/aws/dynamo-values.ts";

describe("DynamoDB attribute values", () => {
  it("marshals JSON-like values to DynamoDB's typed form", () => {
    expect(
      marshallItem({
        s: "text",
        empty: "",
        n: 42,
        f: -1.5,
        big: 12n,
        yes: true,
        nothing: null,
        list: ["a", 1, undefined, [false]],
        map: { nested: { deep: "x" }, skipped: undefined },
        bytes: new Uint8Array([1, 2, 3]),
        gone: undefined,
      }),
    ).toEqual({
      s: { S: "text" },
      empty: { S: "" },
      n: { N: "42" },
      f: { N: "-1.5" },
      big: { N: "12" },
      yes: { BOOL: true },
      nothing: { NULL: true },
      list: { L: [{ S: "a" }, { N: "1" }, { L: [{ BOOL: false }] }] },
      map: { M: { nested: { M: { deep: { S: "x" } } } } },
      bytes: { B: "AQID" },
    });
  });

  it("unmarshals every attribute type", () => {
    expect(
      unmarshallItem({
        s: { S: "text" },
        n: { N: "-1.5" },
        yes: { BOOL: true },
        nothing: { NULL: true },
        list: { L: [{ S: "a" }, { M: { k: { N: "1" } } }] },
        bytes: { B: "AQID" },
        ss: { SS: ["a", "b"] },
        ns: { NS: ["1", "2"] },
      }),
    ).toEqual({
      s: "text",
      n: -1.5,
      yes: true,
      nothing: null,
      list: ["a", { k: 1 }],
      bytes: new Uint8Array([1, 2, 3]),
      ss: new Set(["a", "b"]),
      ns: new Set([1, 2]),
    });
  });

  it("reads stream images too, and rejects an unknown attribute type", () => {
    expect(unmarshallItem({ n: { N: "-12.5" }, map: { M: { inner: { L: [{ N: "1" }, { S: "two" }] } } } })).toEqual({
      n: -12.5,
      map: { inner: [1, "two"] },
    });
    expect(() => unmarshallItem({ odd: { X: "1" } as never })).toThrow(/unknown DynamoDB attribute type X/);
  });

  it("round-trips a record", () => {
    const item = { pk: "p", sk: "s", ttl: 1_700_000_000, data: { tags: ["x"], limits: { rpm: 10, on: false } } };
    expect(unmarshallItem(marshallItem(item))).toEqual(item);
  });

  it("refuses values it cannot store faithfully", () => {
    expect(() => marshallItem({ n: Number.NaN })).toThrow(RangeError);
    expect(() => marshallItem({ n: Number.POSITIVE_INFINITY })).toThrow(RangeError);
    expect(() => marshallItem({ n: 2 ** 60 })).toThrow(RangeError);
    expect(() => marshallItem({ d: new Date() })).toThrow(TypeError);
    expect(() => marshallItem({ m: new Map() })).toThrow(TypeError);
    expect(() => marshallItem({ f: () => 1 })).toThrow(TypeError);
  });
});
