import { describe, expect, it } from "vitest";
import { compareSequence } from "../../../core/observe/analytics/log-batch.ts";

describe("stream sequence numbers", () => {
  it("order as decimal numbers of any length", () => {
    expect(compareSequence("111", "222")).toBeLessThan(0);
    expect(compareSequence("999", "1000")).toBeLessThan(0);
    expect(compareSequence("4421584500000000017450439092", "4421584500000000017450439091")).toBeGreaterThan(0);
    expect(compareSequence("300", "300")).toBe(0);
  });
});
