import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildLocal, scratchBuildDir } from "../../scripts/build.ts";
import { type BundleGateway, startBundleGateway } from "../helpers/bundle-gateway.ts";

/**
 * `npm run build` (or the build `npm start` runs first) beside a gateway already running from the same folder
 * (scripts/build-folders.ts): the running gateway keeps answering routes whose modules it loads lazily, during the
 * build and after it; the next start runs the new build; an old build is deleted once no process runs from it.
 */

const dist = scratchBuildDir("gateway-rebuild");
const gateways: BundleGateway[] = [];

afterAll(async () => {
  await Promise.all(gateways.map((gateway) => gateway.close()));
  rmSync(dist, { recursive: true, force: true });
});

const builds = () => readdirSync(join(dist, "builds")).sort();

describe("rebuilding under a running gateway", () => {
  it("keeps serving lazily loaded routes during and after a build; the next start runs the new build", async () => {
    const first = await buildLocal(dist);
    const running = await startBundleGateway({}, { dist });
    gateways.push(running);
    expect((await fetch(`${running.url}/health`)).status).toBe(200);

    // Neither route has been used yet: their modules load now, from the folder the process started from.
    const rebuilding = buildLocal(dist);
    const openapi = await fetch(`${running.url}/v1/openapi.json`);
    expect(
      openapi.status,
      await openapi
        .clone()
        .text()
        .then((text) => text.slice(0, 300)),
    ).toBe(200);
    expect((await openapi.json()).openapi).toMatch(/^3\./);
    const second = await rebuilding;
    expect(second).not.toBe(first);
    const registry = await fetch(`${running.url}/v0.1/servers`, { headers: { "x-gateway-api-key": running.adminKey } });
    expect(registry.status, await registry.clone().text()).toBe(200);
    expect(running.output()).not.toContain("ERR_MODULE_NOT_FOUND");

    // A new start runs the newest build; the first stays while its gateway runs, even past two more builds.
    const next = await startBundleGateway({}, { dist });
    gateways.push(next);
    expect((await fetch(`${next.url}/v1/openapi.json`)).status).toBe(200);
    expect(existsSync(join(second, ".running"))).toBe(true);
    const third = await buildLocal(dist);
    expect(builds().map((id) => join(dist, "builds", id))).toEqual([first, second, third]);
    expect((await fetch(`${running.url}/v1/openapi.json`)).status).toBe(200);

    // Once its gateway has exited, the next build deletes it (the two newest stay).
    await running.close();
    gateways.splice(gateways.indexOf(running), 1);
    const fourth = await buildLocal(dist);
    expect(existsSync(first)).toBe(false);
    expect(existsSync(second)).toBe(true); // its gateway still runs
    expect(existsSync(third) && existsSync(fourth)).toBe(true);
    expect((await fetch(`${next.url}/v0.1/servers`, { headers: { "x-gateway-api-key": next.adminKey } })).status).toBe(
      200,
    );
  }, 240_000);
});
