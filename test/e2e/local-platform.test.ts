import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ALL_HANDLERS } from "../../core/routes/handlers.ts";
import { buildLocal, scratchBuildDir } from "../../scripts/build.ts";
import { npmStartCommand } from "../../scripts/start-command.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { startTestGateway } from "../helpers/gateway.ts";
import { startMockServer } from "../helpers/mock-server.ts";

const root = new URL("../../", import.meta.url).pathname;

describe("local platform", () => {
  it("mounts every route of every family in the route table", async () => {
    expect(Object.keys(ALL_HANDLERS).sort()).toEqual(ROUTE_FAMILIES.map((family) => family.name).sort());
    const gateway = await startTestGateway();
    try {
      for (const family of ROUTE_FAMILIES) {
        for (const route of family.routes) {
          const path = route.path.replace(/:\w+/g, "x").replace("*", "x");
          const response = await fetch(`${gateway.url}${path}`, { method: route.method });
          const body = route.method === "GET" || response.status >= 400 ? await response.text() : "";
          expect(body, `${route.method} ${route.path}`).not.toContain("unknown_url");
        }
      }
    } finally {
      await gateway.close();
    }
  });

  it("creates the organisation and admin key once, stores only its hash", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gateway-bootstrap-"));
    const first = await startTestGateway({ GATEWAY_DATA_DIR: dataDir });
    const key = first.adminKey;
    expect(key).toMatch(/^gk-/);
    await first.gateway.close();
    const second = await startTestGateway({ GATEWAY_DATA_DIR: dataDir });
    expect(second.gateway.bootstrap.adminApiKey).toBeUndefined();
    expect(second.gateway.bootstrap.organisationId).toBe(first.gateway.bootstrap.organisationId);
    const models = await fetch(`${second.url}/v1/models`, { headers: { "x-gateway-api-key": key } });
    expect(models.status).toBe(200);
    await second.close();
    for (const file of readdirSync(dataDir)) {
      if (file.startsWith("gateway.db")) expect(readFileSync(join(dataDir, file)).includes(key)).toBe(false);
    }
  });

  it("npm start: prints the key once, serves, and on SIGTERM finishes in-flight requests before exiting", async () => {
    const upstream = await startMockServer(async (_req, res) => {
      await new Promise((resolve) => setTimeout(resolve, 600));
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "x",
          object: "chat.completion",
          created: 1,
          model: "m",
          choices: [],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
    const dataDir = mkdtempSync(join(tmpdir(), "gateway-start-"));
    // What `npm start` runs: the bundle scripts/build.ts makes (storage thread included), built here first.
    const dist = scratchBuildDir("gateway-start-test");
    await buildLocal(dist);
    // With npm start's environment and Node flags (package.json), so a flag Node refuses fails here.
    const start = npmStartCommand();
    const child = spawn(join(root, "node_modules/.bin/node"), [...start.nodeArgs, join(dist, "main.mjs")], {
      cwd: root,
      env: {
        ...process.env,
        ...start.env,
        PORT: "0",
        HOST: "127.0.0.1",
        GATEWAY_DATA_DIR: dataDir,
        TRUSTED_CUSTOM_HOSTS: "127.0.0.1",
      },
    });
    let output = "";
    child.stdout.on("data", (data) => {
      output += data;
    });
    let errors = "";
    child.stderr.on("data", (data) => {
      errors += data;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    try {
      await expect
        .poll(() => /listening on (http:\S+)\/v1/.test(output) && /gk-\S+/.test(output), { timeout: 15_000 })
        .toBe(true);
      const url = /listening on (http:\S+)\/v1/.exec(output)![1]!;
      const key = /(gk-\S+)/.exec(output)![1]!;
      const inFlight = fetch(`${url}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "x-gateway-api-key": key,
          "x-gateway-provider": "openai",
          "x-gateway-custom-host": upstream.url,
        },
        body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "hi" }] }),
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      child.kill("SIGTERM");
      const response = await inFlight;
      expect(response.status).toBe(200);
      expect(await exited).toBe(0);
      // The storage thread started from the bundle (a worker refusing npm start's Node flags would show here).
      expect(errors).not.toMatch(/storage worker/);
      const logs = new Database(join(dataDir, "logs.db"), { readonly: true });
      try {
        expect(logs.prepare("SELECT count(*) AS n FROM records WHERE pk LIKE 'LOG#%'").get()).toEqual({ n: 1 });
      } finally {
        logs.close();
      }
    } finally {
      child.kill("SIGKILL");
      await upstream.close();
      rmSync(dist, { recursive: true, force: true });
    }
  });
});
