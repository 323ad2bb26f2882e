import { afterEach, describe, expect, it, vi } from "vitest";
import { UpstreamError } from "../../../../core/providers/types.ts";
import { cancelBackground, startBackground } from "../../../../core/features/responses/background.ts";
import type { ResponseOwner } from "../../../../core/features/responses/owner.ts";
import { responseStoreOf } from "../../../../core/features/responses/response-store.ts";
import { localResponseServices, newOwner, storedResponse } from "./local-response-stores.ts";

const services = localResponseServices();
const store = () => responseStoreOf(services());

/** A request context whose background work the test can await. */
function context() {
  const pending: Promise<unknown>[] = [];
  return {
    ctx: { services: services() as never, waitUntil: (work: Promise<unknown>) => void pending.push(work) },
    settled: () => Promise.all(pending),
  };
}

/** A promise the test resolves by hand. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const answer = (text: string) => ({
  status: "completed",
  output: [
    {
      id: "msg_out",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text, annotations: [] }],
    },
  ],
  usage: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
});

async function start(
  owner: ResponseOwner,
  run: (signal: AbortSignal) => Promise<Record<string, any>>,
  options: { cancelPollMs?: number } = {},
) {
  const { ctx, settled } = context();
  const queued = storedResponse({ status: "queued", background: true, created_at: 1_900_000_000 });
  const entry = await startBackground(ctx, owner, queued, run, options);
  return { id: String(entry.response.id), entry, settled };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("background responses", () => {
  it("answers queued, runs in progress, and stores the run's answer as completed", async () => {
    const owner = newOwner();
    let seenWhileRunning: string | undefined;
    const known = deferred<string>();
    const { id, entry, settled } = await start(owner, async () => {
      seenWhileRunning = (await store().get(owner, await known.promise))?.response.status;
      return { ...answer("Done"), id: "resp_other", created_at: 1 };
    });
    known.resolve(id);
    expect(entry.response).toMatchObject({ status: "queued", background: true });
    await settled();
    expect(seenWhileRunning).toBe("in_progress");
    expect((await store().get(owner, id))?.response).toMatchObject({
      id,
      created_at: 1_900_000_000,
      status: "completed",
      background: true,
      output: [{ content: [{ text: "Done" }] }],
      usage: { total_tokens: 5 },
    });
  });

  it("aborts the run on cancel and keeps the response cancelled even when the run answers anyway", async () => {
    const owner = newOwner();
    const started = deferred();
    const aborted = deferred();
    const { id, settled } = await start(owner, async (signal) => {
      started.resolve();
      signal.addEventListener("abort", () => aborted.resolve());
      await aborted.promise;
      return answer("too late"); // ignores the abort: the result must be dropped
    });
    await started.promise;
    const cancelled = await cancelBackground(store(), owner, id);
    expect(cancelled.response.status).toBe("cancelled");
    await aborted.promise;
    await settled();
    const final = (await store().get(owner, id))?.response;
    expect(final).toMatchObject({ status: "cancelled", output: [] });
    // Cancelling again answers the cancelled response.
    expect((await cancelBackground(store(), owner, id)).response.status).toBe("cancelled");
  });

  it("learns of a cancel made by another process from its record: aborts, and its late answer is dropped", async () => {
    const owner = newOwner();
    const started = deferred();
    const finish = deferred();
    let abortedBySignal = false;
    const { id, settled } = await start(
      owner,
      async (signal) => {
        started.resolve();
        signal.addEventListener("abort", () => {
          abortedBySignal = true;
        });
        await finish.promise;
        return answer("late");
      },
      { cancelPollMs: 5 },
    );
    await started.promise;
    // Another invocation has no controller for this run: it can only mark the record.
    expect((await store().setStatus(owner, id, "cancelled"))?.applied).toBe(true);
    await vi.waitFor(() => expect(abortedBySignal).toBe(true), { timeout: 2000, interval: 10 });
    finish.resolve();
    await settled();
    expect((await store().get(owner, id))?.response.status).toBe("cancelled");
  });

  it("stores a run that throws as failed with OpenAI's error {code, message}", async () => {
    const owner = newOwner();
    const limited = await start(owner, async () => {
      throw new UpstreamError(429, "Rate limit reached for requests.");
    });
    await limited.settled();
    expect((await store().get(owner, limited.id))?.response).toMatchObject({
      status: "failed",
      error: { code: "rate_limit_exceeded", message: "Rate limit reached for requests." },
    });

    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = await start(owner, async () => {
      throw new TypeError("cannot read properties of undefined (reading 'secret internals')");
    });
    await broken.settled();
    const failed = (await store().get(owner, broken.id))?.response;
    expect(failed).toMatchObject({ status: "failed", error: { code: "server_error" } });
    expect(failed?.error.message).not.toMatch(/internals/);
    expect(errors).toHaveBeenCalled();
  });

  it("keeps an incomplete answer's status", async () => {
    const owner = newOwner();
    const { id, settled } = await start(owner, async () => ({
      ...answer("cut"),
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    }));
    await settled();
    expect((await store().get(owner, id))?.response).toMatchObject({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
    });
  });
});

describe("cancel", () => {
  it("refuses a finished background response with 400, like OpenAI", async () => {
    const owner = newOwner();
    const { id, settled } = await start(owner, async () => answer("Done"));
    await settled();
    await expect(cancelBackground(store(), owner, id)).rejects.toMatchObject({
      status: 400,
      message: "Cannot cancel a completed response.",
    });
    expect((await store().get(owner, id))?.response.status).toBe("completed");
  });

  it("refuses a response that was not created in the background, and answers 404 for unknown or foreign ids", async () => {
    const owner = newOwner();
    const plain = storedResponse({ status: "completed" });
    await store().save(owner, plain);
    await expect(cancelBackground(store(), owner, plain.response.id)).rejects.toMatchObject({
      status: 400,
      message: "Cannot cancel a synchronous response.",
    });
    await expect(cancelBackground(store(), owner, "resp_unknown")).rejects.toMatchObject({ status: 404 });
    const queued = storedResponse({ status: "queued", background: true });
    await store().save(owner, queued);
    await expect(
      cancelBackground(store(), { ...owner, workspaceId: "ws_other" }, queued.response.id),
    ).rejects.toMatchObject({ status: 404 });
    expect((await store().get(owner, queued.response.id))?.response.status).toBe("queued");
  });

  it("cancels a queued response before its run starts: the run never writes", async () => {
    const owner = newOwner();
    const queued = storedResponse({ status: "queued", background: true });
    await store().save(owner, queued);
    const cancelled = await cancelBackground(store(), owner, queued.response.id);
    expect(cancelled.response.status).toBe("cancelled");
    expect(await store().setStatus(owner, queued.response.id, "in_progress")).toMatchObject({ applied: false });
  });
});
