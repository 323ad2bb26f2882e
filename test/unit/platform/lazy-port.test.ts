import { describe, expect, it } from "vitest";
import { lazyPort } from "../../../core/platform/aws/lazy.ts";
import type { Blobs } from "../../../core/store/ports.ts";

describe("a store port loaded on first use (core/platform/aws/lazy.ts)", () => {
  it("forwards calls to the adapter, which it loads once", async () => {
    let loads = 0;
    const { port } = lazyPort<{ size(key: string): Promise<number> }>(async () => {
      loads++;
      return { size: async (key) => key.length };
    });
    expect(await port.size("abc")).toBe(3);
    expect(await port.size("abcd")).toBe(4);
    expect(loads).toBe(1);
  });

  it("says an optional method the adapter lacks is missing, without loading it (GET /_blobs/* on AWS)", async () => {
    let loads = 0;
    const { port } = lazyPort<Blobs>(async () => {
      loads++;
      return {} as Blobs;
    }, ["verifySignedUrl"]);
    expect(port.verifySignedUrl).toBeUndefined();
    // Not a thenable either: awaiting the port must not call through to the adapter.
    expect(await Promise.resolve(port)).toBe(port);
    expect(loads).toBe(0);
  });
});
