import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { Worker } from "node:worker_threads";
import type { InstanceMessage, InvokeMessage } from "./instance-protocol.ts";

/**
 * The shape's side of one Lambda instance (lambda-worker.ts runs in the thread): cold start, one invocation at a
 * time, the function's timeout (past it the environment is stopped, as Lambda stops it, and the next invocation
 * gets a new one), and what it logs, each line prefixed with the instance's id like a CloudWatch log stream.
 */

export interface InstanceOptions {
  /** `ChatFunction#3`. */
  id: string;
  functionName: string;
  /** The bundle's entry chunk. */
  file: string;
  memoryMb: number;
  timeoutSeconds: number;
  env: Record<string, string>;
  log: (line: string) => void;
}

/** Where a streaming invocation's writes go, as they happen. */
export interface StreamSink {
  chunk(bytes: Uint8Array, contentType: string | undefined): void;
  end(): void;
}

/** An invocation that did not complete: the handler threw, the function timed out, the environment crashed. */
export class InvocationError extends Error {
  readonly kind: "error" | "timeout" | "crash";

  constructor(message: string, kind: InvocationError["kind"]) {
    super(message);
    this.kind = kind;
  }
}

interface Pending {
  sink?: StreamSink;
  resolve(result: unknown): void;
  reject(error: InvocationError): void;
}

export class LambdaInstance {
  readonly id: string;
  readonly initMs: number;
  invocations = 0;
  #dead = false;
  #nextId = 1;
  readonly #worker: Worker;
  readonly #options: InstanceOptions;
  readonly #pending = new Map<number, Pending>();

  private constructor(worker: Worker, options: InstanceOptions, initMs: number) {
    this.#worker = worker;
    this.#options = options;
    this.id = options.id;
    this.initMs = initMs;
    worker.on("message", (message: InstanceMessage) => this.#onMessage(message));
    worker.on("error", (error) => this.#die(`the environment crashed: ${error.message}`));
    worker.on("exit", (code) => this.#die(`the environment exited (${code})`));
  }

  /** A cold start: a new environment that imports the bundle (the init phase). */
  static async start(options: InstanceOptions): Promise<LambdaInstance> {
    const worker = new Worker(new URL("./lambda-worker.ts", import.meta.url), {
      workerData: { file: options.file, functionName: options.functionName, memoryMb: options.memoryMb },
      env: options.env,
      stdout: true,
      stderr: true,
      // The function's memory setting bounds the heap, as it bounds the sandbox.
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
    });
    pipeLines(worker.stdout, (line) => options.log(`[${options.id}] ${line}`));
    pipeLines(worker.stderr, (line) => options.log(`[${options.id}] ${line}`));
    const initMs = await new Promise<number>((resolve, reject) => {
      const onMessage = (message: InstanceMessage) => {
        if (message.type === "ready") resolve(message.initMs);
        if (message.type === "init-error") reject(new InvocationError(`init failed: ${message.message}`, "crash"));
      };
      worker.on("message", onMessage);
      worker.once("error", (error) => reject(new InvocationError(`init failed: ${error.message}`, "crash")));
      worker.once("exit", (code) =>
        reject(new InvocationError(`the environment exited during init (${code})`, "crash")),
      );
    }).catch(async (error) => {
      await worker.terminate();
      throw error;
    });
    worker.removeAllListeners("message").removeAllListeners("error").removeAllListeners("exit");
    return new LambdaInstance(worker, options, initMs);
  }

  get dead(): boolean {
    return this.#dead;
  }

  /**
   * Runs one invocation. Streaming ones hand their writes to `sink` and resolve when the handler settles, which
   * may be well after the stream ended (background work); others resolve to the handler's result.
   */
  invoke(event: unknown, sink?: StreamSink): Promise<unknown> {
    if (this.#dead) return Promise.reject(new InvocationError("the environment is gone", "crash"));
    this.invocations++;
    const id = this.#nextId++;
    const timeoutMs = this.#options.timeoutSeconds * 1000;
    const message: InvokeMessage = {
      id,
      requestId: randomUUID(),
      deadline: Date.now() + timeoutMs,
      streaming: sink !== undefined,
      event,
    };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#options.log(`[${this.id}] Task timed out after ${this.#options.timeoutSeconds} seconds`);
        // Lambda stops an environment whose invocation timed out; the next invocation starts a new one.
        void this.terminate(`Task timed out after ${this.#options.timeoutSeconds} seconds`, "timeout");
      }, timeoutMs);
      timer.unref();
      this.#pending.set(id, {
        sink,
        resolve: (result) => {
          clearTimeout(timer);
          resolve(result);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.#worker.postMessage(message);
    });
  }

  /** Stops the environment; what it was running fails with `reason`. */
  async terminate(reason = "the environment was recycled", kind: InvocationError["kind"] = "crash"): Promise<void> {
    this.#die(reason, kind);
    await this.#worker.terminate();
  }

  #onMessage(message: InstanceMessage): void {
    if (message.type === "ready" || message.type === "init-error") return;
    const pending = this.#pending.get(message.id);
    if (!pending) return;
    if (message.type === "chunk") pending.sink?.chunk(message.bytes, message.contentType);
    else if (message.type === "end") pending.sink?.end();
    else {
      this.#pending.delete(message.id);
      if (message.error !== undefined) pending.reject(new InvocationError(message.error, "error"));
      else pending.resolve(message.result);
    }
  }

  #die(reason: string, kind: InvocationError["kind"] = "crash"): void {
    if (this.#dead) return;
    this.#dead = true;
    for (const pending of this.#pending.values()) pending.reject(new InvocationError(reason, kind));
    this.#pending.clear();
  }
}

function pipeLines(stream: Readable, line: (text: string) => void): void {
  createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY }).on("line", line);
}
