import { describe, expect, it } from "vitest";
import { loadOnce } from "../../../core/util/load-once.ts";

describe("loadOnce (modules loaded on first use)", () => {
  it("loads once however many callers ask, concurrently or later, and gives the value synchronously after", async () => {
    let loads = 0;
    const module = loadOnce(async () => ({ n: ++loads }));
    expect(module.loaded()).toBeUndefined();
    const [a, b] = await Promise.all([module.get(), module.get()]);
    expect(a).toBe(b);
    expect(await module.get()).toBe(a);
    expect(module.loaded()).toBe(a);
    expect(loads).toBe(1);
  });

  it("forgets a failed load: the next call tries again", async () => {
    let loads = 0;
    const module = loadOnce(async () => {
      if (++loads === 1) throw new Error("chunk missing");
      return "ok";
    });
    await expect(module.get()).rejects.toThrow("chunk missing");
    expect(module.loaded()).toBeUndefined();
    expect(await module.get()).toBe("ok");
    expect(loads).toBe(2);
  });
});
