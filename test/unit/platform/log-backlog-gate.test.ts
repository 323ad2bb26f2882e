import { afterEach, describe, expect, it, vi } from "vitest";
import { type LogBacklog, LogBacklogGate } from "../../../core/platform/local/log-backlog-gate.ts";
import { createLocalStores, type LocalStores } from "../../../core/platform/local/local-stores.ts";
import { tempDirs } from "../../helpers/sqlite-files.ts";

/** A backlog the test moves by hand, telling the gate as the storage thread's answers would. */
function fakeBacklog(): LogBacklog & { set(size: number): void } {
  let size = 0;
  const listeners: Array<() => void> = [];
  return {
    get backlog() {
      return size;
    },
    onSettled: (listener) => listeners.push(listener),
    set(next: number) {
      size = next;
      for (const listener of listeners) listener();
    },
  };
}

const limits = { high: 10, low: 2, maxHoldMs: 1_000 };

afterEach(() => {
  vi.useRealTimers();
});

describe("the request-log backlog gate", () => {
  it("lets requests through at once (no promise) while the backlog is under its high mark", () => {
    const logs = fakeBacklog();
    const gate = new LogBacklogGate(logs, limits);
    logs.set(9);
    expect(gate.admit()).toBeUndefined();
    expect(gate.heldRequests).toBe(0);
  });

  it("holds new requests from the high mark until the backlog is down to the low mark", async () => {
    const logs = fakeBacklog();
    const gate = new LogBacklogGate(logs, limits);
    logs.set(10);
    const first = gate.admit();
    expect(first).toBeInstanceOf(Promise);
    let released = 0;
    void first!.then(() => released++);
    logs.set(5);
    // Under the high mark but above the low one: a request arriving now waits with the others.
    const second = gate.admit();
    expect(second).toBeInstanceOf(Promise);
    void second!.then(() => released++);
    await Promise.resolve();
    expect(released).toBe(0);
    logs.set(2);
    await Promise.all([first, second]);
    expect(released).toBe(2);
    expect(gate.heldRequests).toBe(2);
    expect(gate.admit()).toBeUndefined();
  });

  it("stops holding when the thread does not catch up in time, until its backlog has drained", async () => {
    vi.useFakeTimers();
    const logs = fakeBacklog();
    const gate = new LogBacklogGate(logs, limits);
    logs.set(50);
    const held = gate.admit()!;
    vi.advanceTimersByTime(limits.maxHoldMs);
    await held;
    // A stuck thread (not a starved one) must not slow every request: requests go on while it stays behind.
    expect(gate.admit()).toBeUndefined();
    logs.set(40);
    expect(gate.admit()).toBeUndefined();
    // Once it has drained, the gate holds again at the high mark.
    logs.set(1);
    logs.set(12);
    expect(gate.admit()).toBeInstanceOf(Promise);
  });
});

describe("the storage thread's backlog", () => {
  const temp = tempDirs("log-backlog");
  let stores: LocalStores | undefined;
  afterEach(async () => {
    await stores?.close();
    stores = undefined;
    temp.removeAll();
  });

  it("counts the log writes the thread has not answered and tells the gate as it answers them", async () => {
    stores = createLocalStores({ dataDir: temp.make(), publicBaseUrl: "http://localhost" });
    const records = stores.logSink.records;
    const gate = new LogBacklogGate(records, { high: 3, low: 0, maxHoldMs: 10_000 });
    const writes = ["a", "b", "c"].map((id) => records.put({ pk: `LOG#${id}`, sk: "LOG", status: 200 }));
    expect(records.backlog).toBe(3);
    const held = gate.admit();
    expect(held).toBeInstanceOf(Promise);
    await Promise.all(writes);
    expect(records.backlog).toBe(0);
    await held;
    expect(gate.admit()).toBeUndefined();
  });
});
