import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import type { CheckResult, CheckThreads, ThreadedCheckInput } from "../../guardrails/types.ts";
import { type CheckReplyMessage, checkJobMessage } from "./check-thread-protocol.ts";

/** The thread's entry: next to this file when run from source, next to the bundle in a build (scripts/build.ts). */
const CHECK_WORKER = new URL(
  import.meta.url.endsWith(".ts") ? "./check-worker.ts" : "./check-worker.mjs",
  import.meta.url,
);

/** A thread with nothing to do for this long is stopped (its memory returned); the next long text starts one. */
const IDLE_MS = 60_000;

/** The default of GATEWAY_GUARDRAIL_THREADS: one a core beyond the event loop's, from one to four. */
export const defaultCheckThreads = (): number => Math.max(1, Math.min(4, availableParallelism() - 1));

interface Job {
  id: number;
  check: { id: string; parameters: unknown; input: ThreadedCheckInput };
  signal: AbortSignal;
  onAbort(): void;
  resolve(result: CheckResult): void;
  reject(error: unknown): void;
}

/**
 * Worker threads that judge guardrail checks on long texts (core/guardrails/budget.ts sends them there), so the
 * event loop never holds such a check, and its time limit stops it: a check still waiting is dropped, a running
 * one has its thread terminated (a new one is started for the next). At most `threads` run at once; the rest
 * wait in order. Threads start on first use, stop after IDLE_MS without work, and never keep the process alive.
 */
export class CheckThreadPool implements CheckThreads {
  readonly #size: number;
  readonly #idle = new Map<Worker, ReturnType<typeof setTimeout>>();
  readonly #running = new Map<Worker, Job>();
  readonly #queue: Job[] = [];
  #jobs = 0;
  #closed = false;

  constructor(threads: number) {
    this.#size = threads;
  }

  run(check: Job["check"], signal: AbortSignal): Promise<CheckResult> {
    if (this.#closed) return Promise.reject(new Error("the guardrail threads are closed"));
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<CheckResult>((resolve, reject) => {
      const job: Job = { id: ++this.#jobs, check, signal, onAbort: () => this.#abort(job), resolve, reject };
      signal.addEventListener("abort", job.onAbort, { once: true });
      this.#queue.push(job);
      this.#dispatch();
    });
  }

  /** Stops every thread; checks still waiting or running reject. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0)) this.#settle(job, { error: new Error("the guardrail threads closed") });
    const workers = [...this.#idle.keys(), ...this.#running.keys()];
    for (const [worker, job] of this.#running) {
      this.#running.delete(worker);
      this.#settle(job, { error: new Error("the guardrail threads closed") });
    }
    for (const timer of this.#idle.values()) clearTimeout(timer);
    this.#idle.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const worker =
        this.#takeIdle() ?? (this.#idle.size + this.#running.size < this.#size ? this.#spawn() : undefined);
      if (!worker) return;
      const job = this.#queue.shift()!;
      this.#running.set(worker, job);
      try {
        worker.postMessage(checkJobMessage(job.id, job.check));
      } catch (error) {
        // Parameters a thread cannot be sent (none of the built-in checks has such): the check errs, the thread stays.
        this.#running.delete(worker);
        this.#makeIdle(worker);
        this.#settle(job, { error });
      }
    }
  }

  #takeIdle(): Worker | undefined {
    for (const [worker, timer] of this.#idle) {
      clearTimeout(timer);
      this.#idle.delete(worker);
      return worker;
    }
    return undefined;
  }

  #makeIdle(worker: Worker): void {
    const timer = setTimeout(() => {
      this.#idle.delete(worker);
      void worker.terminate();
    }, IDLE_MS);
    timer.unref();
    this.#idle.set(worker, timer);
  }

  #spawn(): Worker {
    const worker = new Worker(CHECK_WORKER, {
      // None of the process's flags: the thread needs none, and some refuse to start a worker.
      execArgv: [],
      // A 25 MB text is 50 MB as UTF-16, and a redaction copies it: room for that, not for a runaway check.
      resourceLimits: { maxOldGenerationSizeMb: 512 },
    });
    worker.unref();
    worker.on("message", (reply: CheckReplyMessage) => this.#replied(worker, reply));
    // A thread that dies (out of memory, a crash) fails the check it ran; the next check gets a new thread.
    worker.on("error", (error) => this.#lost(worker, error));
    worker.on("exit", (code) => this.#lost(worker, new Error(`the guardrail thread exited (${code})`)));
    return worker;
  }

  #replied(worker: Worker, reply: CheckReplyMessage): void {
    const job = this.#running.get(worker);
    if (!job || job.id !== reply.job) return;
    this.#running.delete(worker);
    this.#settle(job, "result" in reply ? { result: reply.result } : { error: new Error(reply.error) });
    if (!this.#closed) this.#makeIdle(worker);
    this.#dispatch();
  }

  #lost(worker: Worker, error: unknown): void {
    const job = this.#running.get(worker);
    this.#running.delete(worker);
    clearTimeout(this.#idle.get(worker));
    this.#idle.delete(worker);
    if (job) this.#settle(job, { error });
    if (!this.#closed) this.#dispatch();
  }

  /** The check's time limit passed or its request ended: dropped from the queue, or its thread stopped. */
  #abort(job: Job): void {
    const queued = this.#queue.indexOf(job);
    if (queued >= 0) this.#queue.splice(queued, 1);
    for (const [worker, running] of this.#running) {
      if (running !== job) continue;
      this.#running.delete(worker);
      // Terminating stops the check between two JavaScript steps, however long its text.
      void worker.terminate();
    }
    this.#settle(job, { error: job.signal.reason });
    this.#dispatch();
  }

  #settle(job: Job, outcome: { result: CheckResult } | { error: unknown }): void {
    job.signal.removeEventListener("abort", job.onAbort);
    if ("result" in outcome) job.resolve(outcome.result);
    else job.reject(outcome.error);
  }
}
