import { describe, expect, it } from "vitest";
import { latencyBucket, percentiles } from "../../../../core/observe/analytics/keys.ts";

describe("latency sketch", () => {
  it("gives percentiles within 5% of the exact ones, and merges by adding counts", () => {
    const values = Array.from({ length: 1000 }, (_, index) => 5 + index * 3.7);
    const sketch = new Map<number, number>();
    for (const value of values) sketch.set(latencyBucket(value), (sketch.get(latencyBucket(value)) ?? 0) + 1);
    const [p50, p90, p99] = percentiles(sketch, [0.5, 0.9, 0.99]);
    for (const [estimate, quantile] of [
      [p50, 0.5],
      [p90, 0.9],
      [p99, 0.99],
    ] as const) {
      const exact = values[Math.ceil(quantile * values.length) - 1]!;
      expect(Math.abs(estimate! - exact) / exact).toBeLessThan(0.05);
    }
    expect(percentiles(new Map(), [0.5])).toEqual([null]);
  });
});
