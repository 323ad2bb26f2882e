import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, inject, it } from "vitest";
import { newApiKeySecret } from "../../core/auth/api-key-records.ts";
import { SETTING_NAMES } from "../../core/config/settings.ts";
import { npmStartCommand } from "../../scripts/start-command.ts";
import { type BundleGateway, removeBuiltBundle, startBundleGateway } from "../helpers/bundle-gateway.ts";
import { testDatabaseUrl } from "../helpers/mysql-stores.ts";
import { TEST_CREDENTIALS } from "../setup/emulators.ts";

/**
 * Docker cannot run here, so the container is checked where it can be: the image runs exactly `npm start`'s
 * command (its Node flags and environment), and compose.yaml's gateway environment names only settings the
 * gateway reads. That command, with compose's environment pointed at this machine's MariaDB and S3 emulator,
 * starts a gateway that answers.
 */

const ROOT = new URL("../../", import.meta.url).pathname;
let gateway: BundleGateway | undefined;

afterAll(async () => {
  await gateway?.close();
  await removeBuiltBundle();
});

/** The last stage's CMD (JSON form) and ENV of the Dockerfile. */
function dockerfile() {
  const text = readFileSync(`${ROOT}Dockerfile`, "utf8").replace(/\\\n\s*/g, " ");
  const lastStage = text.slice(text.lastIndexOf("\nFROM "));
  const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(lastStage)![1]!) as string[];
  const env: Record<string, string> = {};
  for (const [, line] of lastStage.matchAll(/^ENV (.*)$/gm)) {
    for (const [, name, value] of line!.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[name!] = value!;
  }
  return { cmd, env };
}

/** compose.yaml's gateway service environment, as written (values may hold ${...}). */
function composeGatewayEnv(): Record<string, string> {
  const text = readFileSync(`${ROOT}compose.yaml`, "utf8");
  const service = text.slice(text.indexOf("\n  gateway:"), text.indexOf("\n  lb:"));
  const block = service.slice(service.indexOf("environment:"), service.indexOf("\n    # "));
  const env: Record<string, string> = {};
  for (const [, name, value] of block.matchAll(/^ {6}([A-Z_][A-Z0-9_]*): (.*)$/gm)) {
    env[name!] = value!.replace(/^"|"$/g, "");
  }
  return env;
}

describe("the container image and compose.yaml", () => {
  it("run npm start's command: the same Node flags, environment and entry point", () => {
    const { cmd, env } = dockerfile();
    const start = npmStartCommand();
    expect(cmd).toEqual(["node", ...start.nodeArgs, "dist/main.mjs"]);
    for (const [name, value] of Object.entries(start.env)) expect(env[name], name).toBe(value);
    expect(env.HOST).toBe("0.0.0.0");
  });

  it("give the gateway replicas only settings it reads", () => {
    const env = composeGatewayEnv();
    expect(Object.keys(env)).toContain("GATEWAY_STORE");
    const credentials = new Set(["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]);
    for (const name of Object.keys(env)) {
      expect(SETTING_NAMES.includes(name) || credentials.has(name), `${name} is a setting`).toBe(true);
    }
  });

  it("start a gateway with that command and compose's environment, on MariaDB and S3", {
    timeout: 120_000,
  }, async () => {
    const emulators = inject("emulators");
    const adminKey = newApiKeySecret();
    const here: Record<string, string> = {
      DATABASE_URL: await testDatabaseUrl("container"),
      GATEWAY_MASTER_KEY: randomBytes(32).toString("base64"),
      GATEWAY_BOOTSTRAP_ADMIN_KEY: adminKey,
      GATEWAY_BUCKET: emulators.bucketName,
      GATEWAY_S3_ENDPOINT: emulators.fauxqs,
      AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    };
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(composeGatewayEnv())) {
      env[name] = value.includes("${") ? here[name]! : value;
    }
    expect(Object.values(env).every((value) => value !== undefined)).toBe(true);
    gateway = await startBundleGateway({ ...env, GATEWAY_PUBLIC_URL: "http://127.0.0.1" }, { adminKey });
    expect((await fetch(`${gateway.url}/health`)).status).toBe(200);
    const keys = await fetch(`${gateway.url}/v1/api-keys`, { headers: { "x-gateway-api-key": adminKey } });
    expect(keys.status).toBe(200);
    expect(gateway.output()).toContain("state in MySQL");
  });
});
