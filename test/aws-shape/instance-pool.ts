import { InvocationError, LambdaInstance, type InstanceOptions } from "./instance.ts";

/**
 * The instances of one function, as Lambda keeps them: each runs one invocation at a time, a new one is started
 * (a cold start) when none is free, and they are stopped now and then. On purpose, sequential requests do not
 * all go to one warm instance as they mostly would on Lambda: they go round the instances in turn, so that
 * whatever one instance keeps in memory (caches, pending work) is missing on the next request, as it is on AWS
 * whenever traffic spreads over several instances.
 */

export interface PoolOptions {
  /** Instances requests go round (each started on its first request): at least 2. */
  instances: number;
  /** Most instances at once; beyond, invocations wait for one to be free (Lambda would start more). */
  maxInstances: number;
  /**
   * An instance is stopped after about this many invocations (uniformly between half and one and a half times
   * it), so its next request is a cold start; 0 never recycles.
   */
  recycleAfter: number;
  /** An instance idle this long is stopped, as Lambda reclaims idle environments (0: never). */
  idleSeconds: number;
  /** Seeds the recycling draws, so a run can be replayed. */
  seed: number;
}

/** What the pool did, for tests and the shape's report. */
export interface PoolStats {
  coldStarts: number;
  invocations: number;
  recycled: number;
  /** Instances stopped after sitting idle. */
  reclaimed: number;
  timeouts: number;
  crashes: number;
  initMs: number[];
}

type Slot = {
  instance?: LambdaInstance;
  starting?: Promise<LambdaInstance>;
  busy: boolean;
  budget: number;
  idle?: NodeJS.Timeout;
};

export class InstancePool {
  readonly stats: PoolStats = {
    coldStarts: 0,
    invocations: 0,
    recycled: 0,
    reclaimed: 0,
    timeouts: 0,
    crashes: 0,
    initMs: [],
  };
  readonly #slots: Slot[] = [];
  readonly #waiting: Array<() => void> = [];
  readonly #instance: Omit<InstanceOptions, "id">;
  readonly #options: PoolOptions;
  readonly #random: () => number;
  #next = 0;
  #started = 0;
  #closed = false;

  constructor(instance: Omit<InstanceOptions, "id">, options: PoolOptions) {
    this.#instance = instance;
    this.#options = { ...options, instances: Math.max(2, options.instances) };
    this.#random = mulberry32(options.seed);
  }

  /** Runs `work` on an instance (the instance's id is passed along); the instance is busy until it settles. */
  async invoke<T>(work: (instance: LambdaInstance) => Promise<T>): Promise<T> {
    const slot = await this.#acquire();
    let instance: LambdaInstance;
    try {
      instance = await this.#ready(slot);
    } catch (error) {
      this.#release(slot);
      throw error;
    }
    this.stats.invocations++;
    try {
      return await work(instance);
    } catch (error) {
      if (error instanceof InvocationError && error.kind !== "error") {
        this.stats[error.kind === "timeout" ? "timeouts" : "crashes"]++;
        slot.instance = undefined;
      }
      throw error;
    } finally {
      await this.#afterInvocation(slot);
    }
  }

  /** Instances running now, by id. */
  get instanceIds(): string[] {
    return this.#slots.flatMap((slot) => (slot.instance && !slot.instance.dead ? [slot.instance.id] : []));
  }

  /** Stops one instance now (the next request to its slot is a cold start); false when none is idle. */
  async recycleOne(): Promise<boolean> {
    const slot = this.#slots.find((candidate) => candidate.instance && !candidate.busy);
    if (!slot?.instance) return false;
    const instance = slot.instance;
    slot.instance = undefined;
    this.stats.recycled++;
    await instance.terminate();
    return true;
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const slot of this.#slots) clearTimeout(slot.idle);
    const instances = await Promise.all(this.#slots.map((slot) => slot.starting?.catch(() => undefined)));
    await Promise.all(
      this.#slots.map((slot, index) => (slot.instance ?? instances[index])?.terminate("the shape stopped")),
    );
    for (const wake of this.#waiting.splice(0)) wake();
  }

  /** The next free slot in turn (a new one while below the maximum), else waits for one. */
  async #acquire(): Promise<Slot> {
    for (;;) {
      if (this.#closed) throw new InvocationError("the shape is stopped", "crash");
      while (this.#slots.length < this.#options.instances) this.#slots.push(this.#emptySlot());
      for (let offset = 0; offset < this.#slots.length; offset++) {
        const index = (this.#next + offset) % this.#slots.length;
        const slot = this.#slots[index]!;
        if (slot.busy) continue;
        this.#next = index + 1;
        slot.busy = true;
        clearTimeout(slot.idle);
        return slot;
      }
      if (this.#slots.length < this.#options.maxInstances) {
        const slot = { ...this.#emptySlot(), busy: true };
        this.#slots.push(slot);
        return slot;
      }
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    }
  }

  #emptySlot(): Slot {
    return { busy: false, budget: this.#budget() };
  }

  async #ready(slot: Slot): Promise<LambdaInstance> {
    if (slot.instance && !slot.instance.dead) return slot.instance;
    const id = `${this.#instance.functionName}#${++this.#started}`;
    slot.starting = LambdaInstance.start({ ...this.#instance, id });
    try {
      slot.instance = await slot.starting;
      slot.budget = this.#budget();
      this.stats.coldStarts++;
      this.stats.initMs.push(slot.instance.initMs);
      return slot.instance;
    } finally {
      slot.starting = undefined;
    }
  }

  async #afterInvocation(slot: Slot): Promise<void> {
    const instance = slot.instance;
    if (instance && this.#options.recycleAfter > 0 && instance.invocations >= slot.budget) {
      slot.instance = undefined;
      this.stats.recycled++;
      await instance.terminate();
    }
    this.#release(slot);
  }

  #release(slot: Slot): void {
    slot.busy = false;
    if (this.#options.idleSeconds > 0 && slot.instance) {
      slot.idle = setTimeout(() => {
        const instance = slot.instance;
        if (slot.busy || !instance) return;
        slot.instance = undefined;
        this.stats.reclaimed++;
        void instance.terminate("the environment was idle");
      }, this.#options.idleSeconds * 1000);
      slot.idle.unref();
    }
    this.#waiting.shift()?.();
  }

  #budget(): number {
    const around = this.#options.recycleAfter;
    if (around <= 0) return Number.POSITIVE_INFINITY;
    return Math.max(1, Math.round(around * (0.5 + this.#random())));
  }
}

/** A small seeded PRNG (mulberry32): the same seed draws the same recycling. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
