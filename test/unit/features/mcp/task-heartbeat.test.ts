import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { McpTaskStore, TASK_HEARTBEAT_MS } from "../../../../core/features/mcp/tasks/store.ts";
import { onBothStoreFamilies } from "../../../helpers/both-store-families.ts";

/**
 * MCP tasks whose running instance is gone (a crash, a restart, a Lambda's time limit) read `failed` once their
 * heartbeat is 30 s old, instead of `working` until the TTL; a heartbeat keeps a long task working; and an outcome
 * arriving after the task was recorded lost never changes the status a caller already read.
 */

const owner = { serverId: "srv_1", workspaceId: "ws_a", keyId: "key_1" };
const HOUR = 3_600_000;

onBothStoreFamilies("mcp-task-heartbeat", (stores) => {
  const clock = { now: Date.now() };
  const store = () => new McpTaskStore(stores().records, stores().blobs, { now: () => clock.now });
  const organisation = () => `org_${randomUUID()}`;

  it("a task its instance stopped beating for reads failed after 30 s, and stays failed", async () => {
    const org = organisation();
    const task = await store().create(org, owner, HOUR);
    clock.now += 25_000;
    expect((await store().get(org, task.taskId, owner))?.status).toBe("working");
    clock.now += 10_000;
    const lost = await store().get(org, task.taskId, owner);
    expect(lost).toMatchObject({ status: "failed", error: { code: -32603 } });
    expect(lost?.statusMessage).toMatch(/stopped before the task finished/);
    // The stalled instance comes back with its result: dropped, the failure stands.
    expect(await store().finish(org, task.taskId, { status: "completed", result: { content: [] } })).toBe(false);
    expect((await store().get(org, task.taskId, owner))?.status).toBe("failed");
  });

  it("heartbeats keep a long task working, and its outcome is recorded", async () => {
    const org = organisation();
    const task = await store().create(org, owner, HOUR);
    for (let beat = 0; beat < 20; beat++) {
      clock.now += TASK_HEARTBEAT_MS;
      await store().heartbeat(org, task.taskId);
    }
    expect((await store().get(org, task.taskId, owner))?.status).toBe("working");
    expect(await store().finish(org, task.taskId, { status: "completed", result: { content: [] } })).toBe(true);
    clock.now += HOUR / 2;
    expect(await store().get(org, task.taskId, owner)).toMatchObject({ status: "completed", result: { content: [] } });
  });

  it("another owner's lost task is neither read nor recorded failed by the caller", async () => {
    const org = organisation();
    const task = await store().create(org, owner, HOUR);
    clock.now += 60_000;
    expect(await store().get(org, task.taskId, { ...owner, keyId: "key_2" })).toBeUndefined();
    const item = await stores().records.get(`MCPTASK#${org}`, task.taskId);
    expect(item?.status).toBe("working");
  });
});
