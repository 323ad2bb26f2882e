import { type ChildProcess, fork } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { buildLocal, scratchBuildDir } from "../../scripts/build.ts";
import { npmStartCommand } from "../../scripts/start-command.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface GatewayProcess {
  url: string;
  adminKey: string;
  /** The child's memory use; after two full garbage collections when `collect` is true. */
  memory(collect: boolean): Promise<NodeJS.MemoryUsage>;
  /** Whether the child is still running (a crash ends it). */
  alive(): boolean;
  close(): Promise<void>;
}

/**
 * Starts the local gateway in a child process as `npm start` runs it: bundled by the build `npm start` uses
 * (scripts/build.ts; the entry is test/helpers/gateway-process.ts, which adds the memory probe), with
 * `npm start`'s Node flags and environment (package.json), plus `--expose-gc`.
 */
export async function startGatewayProcess(env: Record<string, string> = {}): Promise<GatewayProcess> {
  const dir = scratchBuildDir("gateway-process");
  await buildLocal(dir, { name: "gateway-process", source: "test/helpers/gateway-process.ts" });
  const start = npmStartCommand();
  const child: ChildProcess = fork(join(dir, "gateway-process.mjs"), {
    execPath: join(ROOT, "node_modules/.bin/node"),
    execArgv: ["--expose-gc", ...start.nodeArgs],
    env: { ...process.env, ...start.env, GATEWAY_TEST_ENV: JSON.stringify(env) },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  child.once("exit", () => rmSync(dir, { recursive: true, force: true }));
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
