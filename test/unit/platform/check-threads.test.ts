import { afterAll, describe, expect, it } from "vitest";
import { CheckThreadPool } from "../../../core/platform/node/check-threads.ts";
import type { ThreadedCheckInput } from "../../../core/guardrails/types.ts";

/**
 * The guardrail check threads (core/platform/node/check-threads.ts) with real worker threads running the real
 * checks: they answer what the check answers on the event loop, and a check's signal stops it, queued or running.
 */

const pool = new CheckThreadPool(1);
afterAll(() => pool.close());

const input = (text: string, parts = [text]): ThreadedCheckInput => ({
  phase: "input",
  route: "chat",
  text,
  parts,
  model: "gpt-4o-mini",
  metadata: {},
});

const never = () => new AbortController().signal;
const SENTENCE = "The quick brown fox jumps over the lazy dog. ";
/** Seconds of word counting on a thread. */
const HUGE = SENTENCE.repeat(Math.ceil((20 * 1024 * 1024) / SENTENCE.length));

/** The CPU this process spends (every thread) over `ms`. */
async function cpuOver(ms: number): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000;
}

describe("CheckThreadPool", () => {
  it("answers what the check answers: the judged text sent once when it is one of the parts", async () => {
    const result = await pool.run(
      { id: "default.wordCount", parameters: { maxWords: 3, not: false }, input: input("one two three four") },
      never(),
    );
    expect(result).toMatchObject({ verdict: false, data: { count: 4 } });
    const judged = await pool.run(
      {
        id: "portkey.pii",
        parameters: { redact: true, defaultCountry: "US" },
        input: input("mail jane.doe@example.com", ["system", "mail jane.doe@example.com"]),
      },
      never(),
    );
    expect(judged.transformedParts).toEqual(["system", "mail [EMAIL_ADDRESS]"]);
  });

  it("a check that throws, or an unknown one, rejects with its message", async () => {
    await expect(pool.run({ id: "default.nope", parameters: {}, input: input("x") }, never())).rejects.toThrow(
      "unknown check 'default.nope'",
    );
    // A self-contained check never reaches out: the environment it would call says why.
    await expect(
      pool.run(
        { id: "default.webhook", parameters: { webhookURL: "https://example.com" }, input: input("x") },
        never(),
      ),
    ).rejects.toThrow(/cannot make outbound calls/);
  });

  it("stops a running check when its signal aborts; the next check gets a new thread", async () => {
    const controller = new AbortController();
    const running = pool.run(
      { id: "default.wordCount", parameters: { maxWords: 1, not: false }, input: input(HUGE) },
      controller.signal,
    );
    // A check waiting behind it is dropped at its own time limit without ever running.
    const waiting = pool.run(
      { id: "default.wordCount", parameters: { maxWords: 1, not: false }, input: input(HUGE) },
      AbortSignal.timeout(50),
    );
    await expect(waiting).rejects.toMatchObject({ name: "TimeoutError" });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const stoppedAt = performance.now();
    controller.abort(new Error("time is up"));
    await expect(running).rejects.toThrow("time is up");
    expect(performance.now() - stoppedAt).toBeLessThan(50);
    // Counting 20 MB of words takes seconds of CPU: a thread left running would spend it now.
    expect(await cpuOver(400)).toBeLessThan(200);
    const next = await pool.run(
      { id: "default.characterCount", parameters: { maxCharacters: 5, not: false }, input: input("four") },
      never(),
    );
    expect(next.verdict).toBe(true);
  });

  it("refuses work once closed, and rejects what was waiting", async () => {
    const closing = new CheckThreadPool(1);
    const running = closing.run(
      { id: "default.wordCount", parameters: { maxWords: 1, not: false }, input: input(HUGE) },
      never(),
    );
    const queued = closing.run({ id: "default.wordCount", parameters: { maxWords: 1 }, input: input("x") }, never());
    const settled = Promise.allSettled([running, queued]);
    await closing.close();
    for (const outcome of await settled) {
      expect(outcome).toMatchObject({ status: "rejected", reason: { message: "the guardrail threads closed" } });
    }
    await expect(closing.run({ id: "default.wordCount", parameters: {}, input: input("x") }, never())).rejects.toThrow(
      /closed/,
    );
  });
});
