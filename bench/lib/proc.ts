import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const BENCH_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const REPO_DIR = resolve(BENCH_DIR, "..");

/**
 * The Node every server of the benchmark runs on: the repo's pinned `node` devDependency (v24), so the
 * gateway, the floor proxy and Portkey's gateway are compared on the same runtime whatever node started us.
 */
export function benchNode(): string {
  const pinned = join(REPO_DIR, "node_modules", ".bin", "node");
  return existsSync(pinned) ? pinned : process.execPath;
}

export function nodeVersion(node: string): string {
  return execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
}

export interface ServerProcess {
  name: string;
  proc: ChildProcess;
  pid: number;
  /** The JSON the process printed when ready (url and more). */
  info: Record<string, any>;
  url: string;
  /** JSON lines the process printed after the ready line (e.g. final counters on exit). */
  messages: Record<string, any>[];
  stderr(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. Resolves when the process has exited. */
  stop(graceMs?: number): Promise<void>;
}

/** Spawns a bench server script (prints `{"ready":true,"url":...}` on stdout when listening). */
export async function spawnServer(
  name: string,
  script: string,
  args: string[] = [],
  options: { env?: Record<string, string | undefined>; nodeArgs?: string[]; timeoutMs?: number; cwd?: string } = {},
): Promise<ServerProcess> {
  const proc = spawn(benchNode(), [...(options.nodeArgs ?? []), script, ...args], {
    cwd: options.cwd ?? REPO_DIR,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (data: Buffer) => {
    stderr += data.toString();
    if (stderr.length > 64_000) stderr = stderr.slice(-32_000);
  });
  const messages: Record<string, any>[] = [];
  let ready = false;
  const info = await new Promise<Record<string, any>>((resolvePromise, reject) => {
    let buffer = "";
    const timer = setTimeout(
      () => fail(new Error(`${name} did not start within ${options.timeoutMs ?? 30_000} ms`)),
      options.timeoutMs ?? 30_000,
    );
    const fail = (error: Error) => {
      clearTimeout(timer);
      proc.kill("SIGKILL");
      reject(new Error(`${error.message}\n--- ${name} stderr ---\n${stderr.slice(-4000)}`));
    };
    proc.once("exit", (code) => fail(new Error(`${name} exited with code ${code} before it was ready`)));
    proc.stdout!.on("data", (data: Buffer) => {
      buffer += data.toString();
      for (let newline = buffer.indexOf("\n"); newline !== -1; newline = buffer.indexOf("\n")) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (!line.startsWith("{")) continue;
        try {
          const parsed = JSON.parse(line);
          if (ready) messages.push(parsed);
          else if (parsed.ready) {
            ready = true;
            clearTimeout(timer);
            proc.removeAllListeners("exit");
            resolvePromise(parsed);
          }
        } catch {
          // not our line
        }
      }
    });
  });
  return wrapProcess(name, proc, info, () => stderr, messages);
}

export function wrapProcess(
  name: string,
  proc: ChildProcess,
  info: Record<string, any>,
  stderr: () => string,
  messages: Record<string, any>[] = [],
): ServerProcess {
  const exited = new Promise<void>((resolvePromise) => {
    // `close` (not `exit`): fires once stdout is drained too, so the last JSON line has been read.
    if (proc.exitCode !== null || proc.signalCode !== null) resolvePromise();
    else proc.once("close", () => resolvePromise());
  });
  return {
    name,
    proc,
    pid: proc.pid!,
    info,
    url: info.url,
    messages,
    stderr,
    async stop(graceMs = 15_000) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
      const timer = setTimeout(() => proc.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** A free TCP port on 127.0.0.1 (for servers that cannot listen on port 0 and tell us). */
export async function freePort(): Promise<number> {
  return await new Promise((resolvePromise, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePromise(port));
    });
  });
}

/** Polls until `url` answers anything (any HTTP status) or the time is up. */
export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await response.arrayBuffer();
      return;
    } catch (error) {
      if (Date.now() > deadline)
        throw new Error(`${url} did not answer within ${timeoutMs} ms: ${(error as Error).message}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface MemoryInfo {
  /** Current resident set size, MB. */
  rssMb: number;
  /** Peak resident set size over the process's life (VmHWM), MB. */
  peakRssMb: number;
}

/** RSS of a process from /proc (Linux); undefined elsewhere. */
export function processMemory(pid: number): MemoryInfo | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rssMb: kb("VmRSS") / 1024, peakRssMb: kb("VmHWM") / 1024 };
  } catch {
    return undefined;
  }
}

/** Total CPU time (user + system) used by a process so far, in seconds (Linux). */
export function processCpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of /proc/pid/stat (1-based), i.e. 11 and 12 after the comm field.
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** CPU jiffies (user + system) of every process, by pid (Linux /proc; empty elsewhere). */
function allProcessJiffies(): Map<number, number> {
  const jiffies = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return jiffies;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      jiffies.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // the process ended meanwhile
    }
  }
  return jiffies;
}

/**
 * Measures the CPU that processes other than ours used during a window (other sessions, tests, builds on a
 * shared machine): a noise indicator for each benchmark cell, as a share of one core.
 */
export function startBackgroundCpu(): (ourPids: number[]) => number | undefined {
  const before = allProcessJiffies();
  const started = performance.now();
  return (ourPids) => {
    if (before.size === 0) return undefined;
    const after = allProcessJiffies();
    const ours = new Set(ourPids);
    let jiffies = 0;
    for (const [pid, value] of after) {
      if (ours.has(pid)) continue;
      jiffies += value - (before.get(pid) ?? 0);
    }
    const seconds = (performance.now() - started) / 1000;
    return seconds > 0 ? jiffies / 100 / seconds : undefined;
  };
}
