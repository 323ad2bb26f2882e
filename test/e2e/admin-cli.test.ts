import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";

/** The admin CLI (scripts/admin.ts), spawned as `npm run admin` would, against a running test gateway. */

const run = promisify(execFile);
const script = fileURLToPath(new URL("../../scripts/admin.ts", import.meta.url));
let gateway: TestGateway;

async function admin(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], {
      env: { ...process.env, GATEWAY_URL: gateway.url, GATEWAY_API_KEY: gateway.adminKey, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

describe("admin CLI", () => {
  it("creates a workspace, keys and an integration, and lists them", async () => {
    const workspace = await admin(["create-workspace", "--name", "CLI Team"]);
    expect(workspace.code, workspace.stderr).toBe(0);
    const created = JSON.parse(workspace.stdout);
    expect(created.id).toMatch(/^ws_/);

    const listed = await admin(["list-workspaces"]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(JSON.parse(listed.stdout).data.map((ws: any) => ws.id)).toContain(created.id);

    const key = await admin([
      "create-key",
      "--type",
      "workspace",
      "--sub-type",
      "service",
      "--name",
      "cli key",
      "--workspace",
      created.id,
      "--scopes",
      "logs.list,api_keys.list",
    ]);
    expect(key.code, key.stderr).toBe(0);
    const secret = JSON.parse(key.stdout).key as string;
    expect(secret).toMatch(/^gk-/);
    // The key works against the gateway, within its workspace and scopes.
    expect((await call(gateway, secret, "GET", "/v1/api-keys")).status).toBe(200);

    const org = await admin([
      "create-key",
      "--type",
      "organisation",
      "--sub-type",
      "service",
      "--name",
      "cli admin",
      "--scopes",
      "*",
    ]);
    expect(org.code, org.stderr).toBe(0);

    const keys = await admin(["list-keys", "--workspace", created.id]);
    expect(keys.code, keys.stderr).toBe(0);
    const data = JSON.parse(keys.stdout).data;
    expect(data.map((entry: any) => entry.name)).toEqual(["cli key"]);
    expect(keys.stdout).not.toContain(secret);

    const integration = await admin([
      "add-integration",
      "--provider",
      "openai",
      "--slug",
      "cli-openai",
      "--api-key",
      "sk-cli-secret",
      "--workspace",
      created.id,
    ]);
    expect(integration.code, integration.stderr).toBe(0);
    expect(JSON.parse(integration.stdout)).toMatchObject({ slug: "cli-openai" });
    expect(integration.stdout).not.toContain("sk-cli-secret");
  });

  it("reports errors with exit code 1", async () => {
    const badScope = await admin([
      "create-key",
      "--type",
      "organisation",
      "--sub-type",
      "service",
      "--name",
      "x",
      "--scopes",
      "nope.nope",
    ]);
    expect(badScope.code).toBe(1);
    expect(badScope.stderr).toContain("nope.nope");
    const missing = await admin(["create-workspace"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("--name");
    const unknown = await admin(["explode"]);
    expect(unknown.code).toBe(1);
    const noKey = await admin(["list-keys"], { GATEWAY_API_KEY: "" });
    expect(noKey.code).toBe(1);
    const wrongKey = await admin(["list-keys"], { GATEWAY_API_KEY: "gk-wrong" });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain("401");
  });
});
