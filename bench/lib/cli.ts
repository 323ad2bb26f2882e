/** `--name=value`, `--name value` is NOT supported (keeps parsing unambiguous); bare `--flag` is "true". */
export function parseFlags(argv: string[]): Record<string, string> {
  const flags: Record<string, string> = {};
  for (const arg of argv) {
    if (!arg.startsWith("--")) continue;
    const eq = arg.indexOf("=");
    if (eq === -1) flags[arg.slice(2)] = "true";
    else flags[arg.slice(2, eq)] = arg.slice(eq + 1);
  }
  return flags;
}

/** The one line a server process prints on stdout when it listens; the orchestrator waits for it. */
export function printReady(info: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ ready: true, ...info })}\n`);
}

export const flagOn = (flags: Record<string, string>, name: string) =>
  flags[name] !== undefined && flags[name] !== "false";
