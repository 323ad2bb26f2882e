import { type ChildProcess, fork } from "node:child_process";

export interface GatewayProcess {
  url: string;
  adminKey: string;
  /** The child's memory use; after two full garbage collections when `collect` is true. */
  memory(collect: boolean): Promise<NodeJS.MemoryUsage>;
  /** Whether the child is still running (a crash ends it). */
  alive(): boolean;
  close(): Promise<void>;
}

/** Starts the local gateway in a child process (test/helpers/gateway-process.ts) as `npm start` runs it, with `--expose-gc`. */
export async function startGatewayProcess(env: Record<string, string> = {}): Promise<GatewayProcess> {
  const child: ChildProcess = fork(new URL("./gateway-process.ts", import.meta.url), {
    // The flags and allocator setting of `npm start` (package.json), plus --expose-gc.
    execArgv: ["--expose-gc", "--max-semi-space-size=4", "--heap-growing-percent=60", "--no-maglev"],
    env: { ...process.env, MALLOC_ARENA_MAX: "2", GATEWAY_TEST_ENV: JSON.stringify(env) },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-20_000);
  });
  const next = <T>(): Promise<T> =>
    new Promise((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`the gateway process exited (${code}): ${stderr}`));
      child.once("exit", onExit);
      child.once("message", (message) => {
        child.off("exit", onExit);
        resolve(message as T);
      });
    });
  const { url, adminKey } = await next<{ url: string; adminKey: string }>();
  return {
    url,
    adminKey,
    async memory(collect) {
      const answer = next<{ memory: NodeJS.MemoryUsage }>();
      child.send(collect ? "memory" : "usage");
      return (await answer).memory;
    },
    alive: () => child.exitCode === null && child.signalCode === null,
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("close");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
