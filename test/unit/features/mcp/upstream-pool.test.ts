import type { Client } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { UpstreamPool } from "../../../../core/features/mcp/upstream/pool.ts";

const fakeClient = () => {
  const client = {
    closed: false,
    async close() {
      client.closed = true;
    },
  };
  return client as unknown as Client & { closed: boolean };
};

afterEach(() => {
  vi.useRealTimers();
});

describe("UpstreamPool", () => {
  it("reuses a connected client for the same key within its lifetime, not for another key", async () => {
    const pool = new UpstreamPool({ ttlMs: 1000, maxEntries: 10 });
    const connect = vi.fn(async () => fakeClient());
    const first = await pool.use("a", connect, async (client) => client);
    const second = await pool.use("a", connect, async (client) => client);
    expect(second).toBe(first);
    expect(connect).toHaveBeenCalledTimes(1);
    const other = await pool.use("b", connect, async (client) => client);
    expect(other).not.toBe(first);
    expect(connect).toHaveBeenCalledTimes(2);
  });

  it("connects anew after the lifetime, and closes the old client later", async () => {
    vi.useFakeTimers();
    const pool = new UpstreamPool({ ttlMs: 1000, maxEntries: 10 });
    const first = await pool.use(
      "a",
      async () => fakeClient(),
      async (client) => client as Client & { closed: boolean },
    );
    vi.advanceTimersByTime(1001);
    const second = await pool.use(
      "a",
      async () => fakeClient(),
      async (client) => client,
    );
    expect(second).not.toBe(first);
    expect(first.closed).toBe(false);
    await vi.advanceTimersByTimeAsync(1001);
    expect(first.closed).toBe(true);
  });

  it("drops a client whose call failed, and a connection that failed", async () => {
    const pool = new UpstreamPool({ ttlMs: 10_000, maxEntries: 10 });
    const connect = vi.fn(async () => fakeClient());
    await expect(
      pool.use("a", connect, async () => {
        throw new Error("call failed");
      }),
    ).rejects.toThrow("call failed");
    expect(pool.size).toBe(0);
    await expect(
      pool.use(
        "b",
        async () => Promise.reject(new Error("refused")),
        async () => 1,
      ),
    ).rejects.toThrow("refused");
    expect(pool.size).toBe(0);
    await pool.use("a", connect, async () => 1);
    expect(connect).toHaveBeenCalledTimes(2);
  });

  it("keeps at most maxEntries clients", async () => {
    const pool = new UpstreamPool({ ttlMs: 10_000, maxEntries: 3 });
    for (const key of ["a", "b", "c", "d", "e"])
      await pool.use(
        key,
        async () => fakeClient(),
        async () => 1,
      );
    expect(pool.size).toBe(3);
  });
});
