import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiKey } from "../../core/auth/api-key-records.ts";
import { DEPLOYMENT_KIND } from "../../core/control/deployments/service.ts";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";

/**
 * Self-hosted gateway deployments end to end: an organisation admin registers one, the deployment beats with
 * its own key, lists show last seen and a status derived from the age of the last beat; other organisations
 * see nothing; a second local gateway configured with the key reports itself.
 */

let gateway: TestGateway;
const api = apiCaller(() => gateway);
let otherOrgKey: string;
let workspaceKey: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  const records = gateway.gateway.services.stores.records;
  const { organisationId, defaultWorkspaceId } = gateway.gateway.bootstrap;
  otherOrgKey = (
    await createApiKey(records, {
      organisationId: "org_other",
      name: "other admin",
      keyType: "organisation",
      keySubType: "service",
      scopes: ["*"],
    })
  ).secret;
  workspaceKey = (
    await createApiKey(records, {
      organisationId,
      workspaceId: defaultWorkspaceId,
      name: "workspace",
      keyType: "workspace",
      keySubType: "service",
      scopes: ["*"],
    })
  ).secret;
});

afterAll(async () => {
  await gateway?.close();
});

const ageBy = async (id: string, milliseconds: number) => {
  const records = gateway.gateway.services.stores.records;
  await records.update(`${DEPLOYMENT_KIND}#${id}`, DEPLOYMENT_KIND, { set: { lastSeenAt: Date.now() - milliseconds } });
};

describe("deployments", () => {
  it("registers, beats, lists with last seen and derived status, and deletes", async () => {
    const created = await api("POST", "/v1/deployments", {
      name: "eu-prod",
      version: "0.1.0",
      region: "eu-west-1",
      url: "https://gateway.eu.example.com/",
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      object: "deployment",
      name: "eu-prod",
      version: "0.1.0",
      region: "eu-west-1",
      url: "https://gateway.eu.example.com",
      status: "offline",
      last_seen_at: null,
    });
    const { id, deployment_key: key } = created.body;
    expect(id).toMatch(/^dep_/);
    expect(key).toMatch(/^gk/);

    const beat = await api("POST", `/v1/deployments/${id}/heartbeat`, { version: "0.2.0", status: "degraded" }, key);
    expect(beat.status).toBe(200);
    expect(beat.body).toMatchObject({ status: "online", health: "degraded", version: "0.2.0" });
    expect(Date.now() - Date.parse(beat.body.last_seen_at)).toBeLessThan(5000);
    expect((await api("POST", "/v1/deployments/self/heartbeat", {}, key)).body).toMatchObject({
      id,
      health: "healthy",
    });

    const listed = await api("GET", "/v1/deployments");
    expect(listed.body.object).toBe("list");
    const entry = listed.body.data.find((item: any) => item.id === id);
    expect(entry).toMatchObject({ status: "online", version: "0.2.0" });
    // The key is answered once, at registration.
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(JSON.stringify((await api("GET", `/v1/deployments/${id}`)).body)).not.toContain(key);

    await ageBy(id, 5 * 60_000);
    expect((await api("GET", `/v1/deployments/${id}`)).body.status).toBe("stale");
    await ageBy(id, 11 * 60_000);
    expect((await api("GET", `/v1/deployments/${id}`)).body.status).toBe("offline");

    const audit = await api("GET", `/v1/audit-logs?resource_type=deployment&resource_id=${id}`);
    expect(audit.body.data.map((item: any) => item.action)).toContain("create");
    expect(JSON.stringify(audit.body)).not.toContain(key);

    expect((await api("DELETE", `/v1/deployments/${id}`)).body).toMatchObject({ id, deleted: true });
    expect((await api("GET", `/v1/deployments/${id}`)).status).toBe(404);
    // Deleting revokes the deployment's key at once.
    expect((await api("POST", "/v1/deployments/self/heartbeat", {}, key)).status).toBe(401);
    const afterDelete = await api("GET", `/v1/audit-logs?resource_type=deployment&resource_id=${id}`);
    expect(afterDelete.body.data.map((item: any) => item.action)).toContain("delete");

    // The gateway logged the heartbeat requests without the deployment key.
    await expect
      .poll(async () => {
        const logs = await api("GET", "/v1/logs?limit=100");
        return logs.body.data.filter((log: any) => String(log.path).endsWith("/heartbeat")).length;
      })
      .toBeGreaterThanOrEqual(2);
    expect(JSON.stringify((await api("GET", "/v1/logs?limit=100")).body)).not.toContain(key);
  });

  it("gives the deployment key nothing but its own heartbeats", async () => {
    const first = (await api("POST", "/v1/deployments", { name: "a" })).body;
    const second = (await api("POST", "/v1/deployments", { name: "b" })).body;
    expect((await api("GET", "/v1/deployments", undefined, first.deployment_key)).status).toBe(403);
    expect((await api("POST", "/v1/deployments", { name: "c" }, first.deployment_key)).status).toBe(403);
    expect((await api("GET", "/v1/configs", undefined, first.deployment_key)).status).toBe(403);
    expect((await api("POST", `/v1/deployments/${second.id}/heartbeat`, {}, first.deployment_key)).status).toBe(403);
    expect((await api("GET", `/v1/deployments/${second.id}`)).body.last_seen_at).toBeNull();
  });

  it("is for organisation admins of the same organisation only", async () => {
    const created = (await api("POST", "/v1/deployments", { name: "private" })).body;
    expect((await api("POST", "/v1/deployments", { name: "ws" }, workspaceKey)).status).toBe(403);
    expect((await api("GET", "/v1/deployments", undefined, workspaceKey)).status).toBe(403);

    const other = await api("GET", "/v1/deployments", undefined, otherOrgKey);
    expect(other.status).toBe(200);
    expect(other.body.data).toEqual([]);
    expect((await api("GET", `/v1/deployments/${created.id}`, undefined, otherOrgKey)).status).toBe(404);
    expect((await api("DELETE", `/v1/deployments/${created.id}`, undefined, otherOrgKey)).status).toBe(404);
    expect((await api("POST", `/v1/deployments/${created.id}/heartbeat`, {}, otherOrgKey)).status).toBe(404);
    // And the other organisation's deployment key cannot beat for this one.
    const foreign = (await api("POST", "/v1/deployments", { name: "foreign" }, otherOrgKey)).body;
    expect((await api("POST", `/v1/deployments/${created.id}/heartbeat`, {}, foreign.deployment_key)).status).toBe(404);
  });

  it("answers 400 naming the param for bad bodies", async () => {
    const missing = await api("POST", "/v1/deployments", { version: "1" });
    expect(missing.status).toBe(400);
    expect(missing.body.error.param).toBe("name");
    const badUrl = await api("POST", "/v1/deployments", { name: "x", url: "ftp://host" });
    expect(badUrl.body.error.param).toBe("url");
    const created = (await api("POST", "/v1/deployments", { name: "bad-beats" })).body;
    const badStatus = await api(
      "POST",
      `/v1/deployments/${created.id}/heartbeat`,
      { status: "sleepy" },
      created.deployment_key,
    );
    expect(badStatus.status).toBe(400);
    expect(badStatus.body.error.param).toBe("status");
    const badInterval = await api(
      "POST",
      `/v1/deployments/${created.id}/heartbeat`,
      { heartbeat_interval_seconds: 0 },
      created.deployment_key,
    );
    expect(badInterval.body.error.param).toBe("heartbeat_interval_seconds");
  });

  it("hears from a local gateway configured to report itself", async () => {
    const created = (await api("POST", "/v1/deployments", { name: "self-reporting" })).body;
    const selfHosted = await startTestGateway({
      GATEWAY_CONTROL_PLANE_URL: gateway.url,
      GATEWAY_DEPLOYMENT_KEY: created.deployment_key,
      GATEWAY_DEPLOYMENT_HEARTBEAT_SECONDS: "1",
      npm_package_version: "9.9.9",
    });
    try {
      await expect
        .poll(async () => (await api("GET", `/v1/deployments/${created.id}`)).body, { timeout: 5000 })
        .toMatchObject({ status: "online", version: "9.9.9", url: selfHosted.url, heartbeat_interval_seconds: 1 });
      const first = (await api("GET", `/v1/deployments/${created.id}`)).body.last_seen_at;
      await expect
        .poll(async () => (await api("GET", `/v1/deployments/${created.id}`)).body.last_seen_at, { timeout: 5000 })
        .not.toBe(first);
    } finally {
      await selfHosted.close();
    }
  });
});
