import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { benchNode, freePort, REPO_DIR, type ServerProcess, waitForHttp, wrapProcess } from "./lib/proc.ts";

/**
 * Portkey's open-source gateway (`@portkey-ai/gateway`, a devDependency) as the reference we race: started
 * headless on a free port with the same Node as our gateway, and pointed at the mock upstream through
 * `x-portkey-custom-host` on each request. Its TRUSTED_CUSTOM_HOSTS default already admits loopback (setting
 * the variable would replace that list), so we leave it unset.
 *
 * 1.15.2 needs `@hono/node-server` 1.14.1 or every streamed request fails (its issue #1389): package.json pins
 * that with an override scoped to `@portkey-ai/gateway`, so our own @hono/node-server stays at 2.x.
 */

export const PORTKEY_ENTRY = join(REPO_DIR, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js");

export function portkeyInstalled(): boolean {
  return existsSync(PORTKEY_ENTRY);
}

export function portkeyVersion(): string | undefined {
  try {
    const manifest = readFileSync(join(REPO_DIR, "node_modules", "@portkey-ai", "gateway", "package.json"), "utf8");
    return (JSON.parse(manifest) as { version: string }).version;
  } catch {
    return undefined;
  }
}

export async function startPortkey(
  options: { nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<ServerProcess> {
  if (!portkeyInstalled())
    throw new Error("@portkey-ai/gateway is not installed: run `npm install` (it is a devDependency)");
  const port = await freePort();
  const proc = spawn(benchNode(), [...(options.nodeArgs ?? []), PORTKEY_ENTRY, "--headless", `--port=${port}`], {
    cwd: REPO_DIR,
    env: { ...process.env, ...options.env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  proc.stderr!.on("data", (data: Buffer) => {
    stderr += data.toString();
    if (stderr.length > 64_000) stderr = stderr.slice(-32_000);
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/`, 30_000);
  } catch (error) {
    proc.kill("SIGKILL");
    throw new Error(`Portkey's gateway did not start: ${(error as Error).message}\n${stderr.slice(-2000)}`);
  }
  return wrapProcess("portkey", proc, { url, pid: proc.pid, version: portkeyVersion() }, () => stderr);
}

if (import.meta.main) {
  const portkey = await startPortkey();
  console.log(JSON.stringify({ ready: true, url: portkey.url, pid: portkey.pid, version: portkeyVersion() }));
  for (const signal of ["SIGTERM", "SIGINT"] as const)
    process.on(signal, () => portkey.stop().then(() => process.exit(0)));
}
