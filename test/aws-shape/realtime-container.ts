import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { buildRealtimeService } from "../../scripts/build.ts";

/**
 * The realtime container service (infra/realtime.ts): the image's entry bundled as its Dockerfile bundles it
 * (scripts/build.ts buildRealtimeService), run as its CMD runs it (plain `node realtime.mjs`, from a folder
 * without node_modules) with the service's environment, and taken into service once its load balancer's health
 * check answers. The port is free rather than 8080 (tests run side by side).
 */

export interface RealtimeContainer {
  url: string;
  close(): Promise<void>;
}

export async function startRealtimeContainer(options: {
  environment: Record<string, string>;
  healthPath: string;
  log(line: string): void;
}): Promise<RealtimeContainer> {
  const dir = mkdtempSync(join(tmpdir(), "shape-realtime-"));
  const bundle = await buildRealtimeService(dir);
  const child: ChildProcess = spawn(process.execPath, [bundle], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...options.environment, PORT: "0", HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let output = "";
  const collect = (chunk: Buffer) => {
    output += chunk;
    for (const line of chunk.toString().split("\n")) if (line) options.log(`[RealtimeService] ${line}`);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const close = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.race([exited, sleep(5000)]);
    if (child.exitCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const url = await listeningUrl(() => output, child);
    await healthy(`${url}${options.healthPath}`);
    return { url, close };
  } catch (error) {
    await close();
    throw error;
  }
}

async function listeningUrl(output: () => string, child: ChildProcess): Promise<string> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const match = /listening on (http:\/\/\S+)/.exec(output());
    if (match) return match[1]!;
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the realtime service did not start:\n${output()}`);
    await sleep(50);
  }
}

/** As the load balancer's health check: the task takes traffic once it answers 200. */
async function healthy(url: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`the realtime service's health check ${url} never answered 200`);
    await sleep(100);
  }
}
