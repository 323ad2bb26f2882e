import { describe, expect, it, vi } from "vitest";
import { RunEventsObserver } from "../../../../core/features/assistants/run-events.ts";
import type { AssistantObjectOwners } from "../../../../core/features/assistants/object-owners.ts";
import { finishedRunOf } from "../../../../core/features/assistants/run-usage.ts";
import { newOutcome } from "../../../../core/inference/gateway/outcome.ts";

/**
 * A streamed run's events (OpenAI's assistant stream events reference: `event: thread.run.completed` with the run
 * object as data) as the relay sees them, split anywhere across network chunks.
 */

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
const run = (status: string, withUsage = true) => ({
  id: "run_1",
  object: "thread.run",
  thread_id: "thread_1",
  assistant_id: "asst_1",
  status,
  model: "gpt-4o",
  usage: withUsage ? usage : null,
});
const sse = (events: Array<[string, unknown]>) =>
  events
    .map(([event, data]) => `event: ${event}\ndata: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`)
    .join("");

function fakeOwners() {
  const claimed: string[] = [];
  let logged = false;
  const owners = {
    claim: vi.fn(async (id: string) => void claimed.push(id)),
    markUsageLogged: vi.fn(async () => {
      if (logged) return false;
      logged = true;
      return true;
    }),
  } as unknown as AssistantObjectOwners;
  return { owners, claimed };
}

describe("streamed run events", () => {
  it("records created objects and the terminal run's usage, whatever the chunking", async () => {
    const text = sse([
      ["thread.created", { id: "thread_1", object: "thread" }],
      ["thread.run.created", run("queued", false)],
      ["thread.run.in_progress", run("in_progress", false)],
      ["thread.message.created", { id: "msg_1", object: "thread.message" }],
      ["thread.message.delta", { id: "msg_1", object: "thread.message.delta", delta: {} }],
      ["thread.run.completed", run("completed")],
      ["done", "[DONE]"],
    ]);
    const bytes = new TextEncoder().encode(text);
    for (const size of [1, 7, bytes.length]) {
      const { owners, claimed } = fakeOwners();
      const outcome = newOutcome("passthrough", "", true);
      const observer = new RunEventsObserver({
        owners,
        owner: { organisationId: "o", workspaceId: "w" },
        outcome,
        provider: "openai",
      });
      for (let at = 0; at < bytes.length; at += size) observer.push(bytes.subarray(at, at + size));
      await observer.settled();
      expect(claimed.sort()).toEqual(["msg_1", "run_1", "thread_1", "thread_1"]);
      expect(outcome.usage).toEqual(usage);
      expect(outcome.answeredModel).toBe("gpt-4o");
      expect(outcome.cost?.priced).toBe(true);
    }
  });

  it("counts no usage for a run that stops to ask for tool outputs", async () => {
    const { owners } = fakeOwners();
    const outcome = newOutcome("passthrough", "", true);
    const observer = new RunEventsObserver({
      owners,
      owner: { organisationId: "o", workspaceId: "w" },
      outcome,
      provider: "openai",
    });
    observer.push(
      new TextEncoder().encode(sse([["thread.run.requires_action", { ...run("requires_action"), usage: null }]])),
    );
    await observer.settled();
    expect(outcome.usage).toBeUndefined();
  });
});

describe("finishedRunOf", () => {
  it("takes runs in a terminal status with usage, nothing else", () => {
    expect(finishedRunOf(run("completed"))).toEqual({ id: "run_1", model: "gpt-4o", usage });
    expect(finishedRunOf(run("failed"))?.usage).toEqual(usage);
    expect(finishedRunOf(run("in_progress"))).toBeUndefined();
    expect(finishedRunOf(run("requires_action"))).toBeUndefined();
    expect(finishedRunOf(run("completed", false))).toBeUndefined();
    expect(finishedRunOf({ ...run("completed"), object: "thread.message" })).toBeUndefined();
    const { total_tokens: _total, ...partial } = usage;
    expect(finishedRunOf({ ...run("completed"), usage: partial })?.usage.total_tokens).toBe(15);
  });
});
