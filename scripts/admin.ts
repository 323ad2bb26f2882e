/**
 * Admin CLI: `npm run admin -- <command> [--flags]`. It talks HTTP to a running gateway, through the same
 * routes (and so the same services, checks and audit log) as any other client, never to the database.
 * Env: GATEWAY_URL (default http://localhost:8787), GATEWAY_API_KEY (an admin or workspace key).
 * Prints the JSON answer on stdout; errors go to stderr with exit code 1.
 */
import { parseArgs } from "node:util";

const USAGE = `Usage: npm run admin -- <command> [options]

Commands:
  create-workspace --name <name> [--slug <slug>] [--description <text>]
  create-key --type organisation|workspace --sub-type service|user --name <name>
             [--workspace <id or slug>] [--user <user id>] [--scopes a.b,c.d] [--rotation-period-days <n>]
  add-integration --provider <provider id> --slug <slug> --api-key <provider key> [--name <name>] [--workspace <id>]
  list-keys [--workspace <id>] [--limit <n>]
  list-workspaces [--limit <n>]

Environment: GATEWAY_URL (default http://localhost:8787), GATEWAY_API_KEY (required).`;

interface Call {
  method: string;
  path: string;
  body?: Record<string, unknown>;
}

type Flags = Record<string, string | undefined>;

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (!value) throw new UsageError(`--${name} is required`);
  return value;
}

class UsageError extends Error {}

const COMMANDS: Record<string, (flags: Flags) => Call> = {
  "create-workspace": (flags) => ({
    method: "POST",
    path: "/v1/admin/workspaces",
    body: {
      name: required(flags, "name"),
      ...(flags.slug ? { slug: flags.slug } : {}),
      ...(flags.description ? { description: flags.description } : {}),
    },
  }),
  "create-key": (flags) => {
    const type = required(flags, "type");
    const subType = required(flags, "sub-type");
    const scopes = (flags.scopes ?? "")
      .split(",")
      .map((scope) => scope.trim())
      .filter(Boolean);
    return {
      method: "POST",
      path: `/v1/api-keys/${encodeURIComponent(type)}/${encodeURIComponent(subType)}`,
      body: {
        name: required(flags, "name"),
        scopes,
        ...(flags.workspace ? { workspace_id: flags.workspace } : {}),
        ...(flags.user ? { user_id: flags.user } : {}),
        ...(flags["rotation-period-days"] ? { rotation_period_days: Number(flags["rotation-period-days"]) } : {}),
      },
    };
  },
  "add-integration": (flags) => ({
    method: "POST",
    path: "/v1/integrations",
    body: {
      name: flags.name ?? required(flags, "slug"),
      slug: required(flags, "slug"),
      ai_provider_id: required(flags, "provider"),
      key: required(flags, "api-key"),
      ...(flags.workspace ? { workspace_id: flags.workspace } : {}),
    },
  }),
  "list-keys": (flags) => ({
    method: "GET",
    path: `/v1/api-keys?${query({ workspace_id: flags.workspace, limit: flags.limit ?? "100" })}`,
  }),
  "list-workspaces": (flags) => ({
    method: "GET",
    path: `/v1/admin/workspaces?${query({ limit: flags.limit ?? "100" })}`,
  }),
};

function query(values: Record<string, string | undefined>): string {
  return new URLSearchParams(
    Object.entries(values).filter((entry): entry is [string, string] => entry[1] !== undefined),
  ).toString();
}

export async function runAdmin(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
): Promise<{ code: number; out: string; err: string }> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h")
    return { code: command ? 0 : 1, out: command ? USAGE : "", err: command ? "" : USAGE };
  const build = COMMANDS[command];
  if (!build) return { code: 1, out: "", err: `Unknown command '${command}'.\n\n${USAGE}` };
  let call: Call;
  try {
    const { values } = parseArgs({
      args: rest,
      strict: true,
      options: Object.fromEntries(
        [
          "name",
          "slug",
          "description",
          "type",
          "sub-type",
          "workspace",
          "user",
          "scopes",
          "rotation-period-days",
          "provider",
          "api-key",
          "limit",
        ].map((name) => [name, { type: "string" as const }]),
      ),
    });
    call = build(values as Flags);
  } catch (error) {
    return { code: 1, out: "", err: `${(error as Error).message}\n\n${USAGE}` };
  }
  const apiKey = env.GATEWAY_API_KEY;
  if (!apiKey) return { code: 1, out: "", err: "GATEWAY_API_KEY is not set: export an admin API key of the gateway." };
  const base = (env.GATEWAY_URL ?? "http://localhost:8787").replace(/\/+$/, "");
  let response: Response;
  try {
    response = await fetch(`${base}${call.path}`, {
      method: call.method,
      headers: { "x-gateway-api-key": apiKey, ...(call.body ? { "content-type": "application/json" } : {}) },
      body: call.body ? JSON.stringify(call.body) : undefined,
    });
  } catch (error) {
    return { code: 1, out: "", err: `Cannot reach the gateway at ${base}: ${(error as Error).message}` };
  }
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: print as is
  }
  if (!response.ok) {
    const message = (body as { error?: { message?: string } })?.error?.message ?? text;
    return { code: 1, out: "", err: `${call.method} ${call.path} failed (${response.status}): ${message}` };
  }
  return { code: 0, out: JSON.stringify(body, null, 2), err: "" };
}

if (import.meta.main) {
  const result = await runAdmin(process.argv.slice(2));
  if (result.out) process.stdout.write(`${result.out}\n`);
  if (result.err) process.stderr.write(`${result.err}\n`);
  process.exitCode = result.code;
}
