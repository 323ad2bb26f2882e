import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadSettings } from "../../../core/config/settings.ts";
import { createScheduledHandler } from "../../../core/platform/aws/scheduled-handler.ts";
import { createLocalStores } from "../../../core/platform/local/local-stores.ts";
import { WorkerLoop } from "../../../core/platform/local/worker-loop.ts";
import type { Services } from "../../../core/services.ts";
import { createServices } from "../../../core/platform/services.ts";
import type { QueueConsumer } from "../../../core/routes/queue-consumers.ts";
import type { ScheduledTask } from "../../../core/routes/scheduled-tasks.ts";

const dirs: string[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const close of closers.splice(0)) await close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function localServices(): Services {
  const dir = mkdtempSync(join(tmpdir(), "scheduled-work-"));
  dirs.push(dir);
  const stores = createLocalStores({ dataDir: dir, publicBaseUrl: () => "http://127.0.0.1" });
  closers.push(() => stores.close());
  return createServices(loadSettings({ GATEWAY_DATA_DIR: dir }), stores);
}

const until = async (check: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe("the local worker loop", () => {
  it("runs each scheduled task on its interval, never two runs of one task at once", async () => {
    const services = localServices();
    let runs = 0;
    let running = 0;
    let overlapped = false;
    const task: ScheduledTask = {
      name: "slow",
      everySeconds: 0.01,
      async run() {
        runs++;
        running++;
        if (running > 1) overlapped = true;
        await new Promise((resolve) => setTimeout(resolve, 30));
        running--;
      },
    };
    const loop = new WorkerLoop(services, {}, { pollMs: 10, visibilityTimeoutSeconds: 30, tasks: [task] });
    loop.start();
    await until(() => runs >= 3);
    await loop.stop();
    const after = runs;
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(runs).toBe(after);
    expect(overlapped).toBe(false);
  });

  it("keeps running a task after it throws", async () => {
    const services = localServices();
    let runs = 0;
    const task: ScheduledTask = {
      name: "failing",
      everySeconds: 0.01,
      async run() {
        runs++;
        throw new Error("boom");
      },
    };
    const loop = new WorkerLoop(services, {}, { pollMs: 10, visibilityTimeoutSeconds: 30, tasks: [task] });
    loop.start();
    await until(() => runs >= 3);
    await loop.stop();
  });

  it("has as many receives in flight on a queue as its concurrency, and delivers each message once", async () => {
    const services = localServices();
    await services.stores.queue.sendBatch(
      "batches",
      Array.from({ length: 40 }, (_, index) => ({ index })),
    );
    let inFlight = 0;
    let most = 0;
    const seen: number[] = [];
    const consumer: QueueConsumer = async (messages) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 50));
      for (const message of messages) seen.push((message.body as { index: number }).index);
      inFlight--;
      return { failedIds: [] };
    };
    const loop = new WorkerLoop(
      services,
      { batches: consumer },
      { pollMs: 10, visibilityTimeoutSeconds: 30, concurrency: { batches: 3 } },
    );
    loop.start();
    await until(() => seen.length >= 40);
    await loop.stop();
    expect(most).toBe(3);
    expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, index) => index));
  });

  it("delivers a message again once its visibility timeout passes (a worker that died holding it)", async () => {
    const services = localServices();
    await services.stores.queue.send("batches", { job: 1 });
    const taken = await services.stores.queue.receive("batches", { max: 1, visibilityTimeoutSeconds: 1 });
    expect(taken).toHaveLength(1);
    const attempts: number[] = [];
    const loop = new WorkerLoop(
      services,
      {
        batches: async (messages) => {
          for (const message of messages) attempts.push(message.attempts);
          return { failedIds: [] };
        },
      },
      { pollMs: 50, visibilityTimeoutSeconds: 1 },
    );
    loop.start();
    await until(() => attempts.length === 1, 5000);
    await loop.stop();
    expect(attempts).toEqual([2]);
  });
});

describe("the scheduled Lambda", () => {
  it("runs every task once, reports the ones that failed, and tells tasks its deadline", async () => {
    const services = localServices();
    const signals: AbortSignal[] = [];
    const handler = createScheduledHandler(
      async () => services,
      [
        {
          name: "ok",
          everySeconds: 60,
          async run(_services, signal) {
            signals.push(signal);
          },
        },
        {
          name: "broken",
          everySeconds: 60,
          async run() {
            throw new Error("provider down");
          },
        },
      ],
    );
    expect(await handler({}, { getRemainingTimeInMillis: () => 60_000 })).toEqual({ failed: ["broken"] });
    expect(signals).toHaveLength(1);
    expect(signals[0]!.aborted).toBe(false);
  });
});
