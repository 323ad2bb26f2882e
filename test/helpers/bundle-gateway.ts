import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLocal, scratchBuildDir } from "../../scripts/build.ts";
import { npmStartCommand } from "../../scripts/start-command.ts";

/**
 * The gateway users run: the bundle `npm run build` makes (scripts/build.ts), started as `npm start` starts it
 * (its Node flags and environment, package.json), as a child process on a free port with a fresh data folder.
 * Bundling can break what the sources do (a lazily loaded chunk, a CommonJS package), so end-to-end tests
 * that must cover what ships drive this instead of the in-process gateway (test/helpers/gateway.ts).
 */

const ROOT = new URL("../../", import.meta.url).pathname;

export interface BundleGateway {
  /** Base URL without /v1. */
  url: string;
  /** The organisation admin key the gateway printed at its first start. */
  adminKey: string;
  /** Its GATEWAY_DATA_DIR (a test may seed records there that no route writes yet). */
  dataDir: string;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends the process a signal (SIGKILL: a crash) and waits for it to exit; the data folder is kept. */
  kill(signal: NodeJS.Signals): Promise<void>;
  close(): Promise<void>;
}

export interface BundleOptions {
  /** Start on this existing data folder (a restart); the caller deletes it. The admin key is then `adminKey`. */
  dataDir?: string;
  adminKey?: string;
  /** Start from this build folder (buildLocal's outdir) rather than the file's shared scratch build. */
  dist?: string;
}

let built: Promise<string> | undefined;

/** Builds the bundle once per test file, into a scratch folder (removeBuiltBundle deletes it). */
export function builtBundle(): Promise<string> {
  built ??= (async () => {
    const dir = scratchBuildDir("gateway-bundle-e2e");
    try {
      await buildLocal(dir);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return dir;
  })();
  return built;
}

/** Deletes the scratch build (call it in afterAll, once every gateway of the file is closed). */
export async function removeBuiltBundle(): Promise<void> {
  const dir = await built?.catch(() => undefined);
  built = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
}

export async function startBundleGateway(
  env: Record<string, string> = {},
  options: BundleOptions = {},
): Promise<BundleGateway> {
  const dist = options.dist ?? (await builtBundle());
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), "gateway-bundle-"));
  const start = npmStartCommand();
  const child: ChildProcess = spawn(join(ROOT, "node_modules/.bin/node"), [...start.nodeArgs, join(dist, "main.mjs")], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...start.env,
      PORT: "0",
      HOST: "127.0.0.1",
      GATEWAY_DATA_DIR: dataDir,
      TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (data) => {
    output += data;
  });
  child.stderr!.on("data", (data) => {
    output += data;
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const close = async () => {
    if (child.exitCode === null) child.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
    if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
  };
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const deadline = Date.now() + 20_000;
  // A restart on an existing data folder prints no new admin key.
  const started = () =>
    /listening on (http:\S+)\/v1/.test(output) && (options.adminKey !== undefined || /gk-\S+/.test(output));
  while (!started()) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await close();
      throw new Error(`the bundled gateway did not start:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: /listening on (http:\S+)\/v1/.exec(output)![1]!,
    adminKey: options.adminKey ?? /(gk-\S+)/.exec(output)![1]!,
    dataDir,
    output: () => output,
    kill,
    close,
  };
}
