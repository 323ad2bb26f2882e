import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * How `npm start` runs the built gateway: the environment and Node flags of the last command of package.json's
 * `start` script (`... && NAME=value node --flag dist/main.mjs`). The benchmark starts its gateway the same way,
 * so the memory and speed it reports are those of `npm start`, from one source of truth; the start-up test runs the
 * built gateway the same way.
 */
export interface StartCommand {
  env: Record<string, string>;
  nodeArgs: string[];
}

export function parseStartCommand(script: string): StartCommand {
  const last = script.split("&&").at(-1)!.trim().split(/\s+/);
  const env: Record<string, string> = {};
  let i = 0;
  for (; i < last.length && /^[A-Z_][A-Z0-9_]*=/.test(last[i]!); i++) {
    const [name, ...value] = last[i]!.split("=");
    env[name!] = value.join("=");
  }
  if (last[i] !== "node") throw new Error(`npm start's last command does not run node: '${last.join(" ")}'`);
  const nodeArgs: string[] = [];
  for (i++; i < last.length && last[i]!.startsWith("-"); i++) nodeArgs.push(last[i]!);
  return { env, nodeArgs };
}

export function npmStartCommand(): StartCommand {
  const root = join(dirname(fileURLToPath(import.meta.url)), "..");
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } };
  return parseStartCommand(pkg.scripts.start);
}
