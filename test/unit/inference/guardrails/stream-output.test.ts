import { describe, expect, it } from "vitest";
import type { SseSource } from "../../../../core/inference/gateway/stream/sse-source.ts";
import { guardStreamTail, readWholeStream } from "../../../../core/inference/guardrails/stream-output.ts";
import { readSseEvents } from "../../../helpers/sse-events.ts";

const head = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o-mini" };
const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;

/** A source handing out the given pieces (a relayed stream's bytes, or text), recording cancellation. */
function sourceOf(pieces: Array<string | Uint8Array>): SseSource & { cancelled: boolean } {
  const queue = [...pieces];
  const source = {
    cancelled: false,
    next: async () => queue.shift() ?? null,
    cancel: async () => {
      source.cancelled = true;
    },
  };
  return source;
}

const pieces = () => [
  Buffer.from(chunk({ role: "assistant", content: "" }) + chunk({ content: "The secret " })),
  chunk({ content: "is swordfish." }),
  // The last read holds the finish chunk, the usage chunk and [DONE] together, as relayed streams do.
  Buffer.from(
    `${chunk({}, "stop")}data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } })}\n\ndata: [DONE]\n\n`,
  ),
];

async function drain(source: SseSource): Promise<string[]> {
  const out: string[] = [];
  for (let piece = await source.next(); piece !== null; piece = await source.next())
    out.push(typeof piece === "string" ? piece : Buffer.from(piece).toString());
  return out;
}

describe("guardStreamTail", () => {
  it("releases content as it comes and holds the finish chunk, usage and [DONE] until the judge has ruled", async () => {
    let judged: Record<string, any> | undefined;
    let rule!: (value: string | undefined) => void;
    const guarded = guardStreamTail(sourceOf(pieces()), "chat", (answer) => {
      judged = answer;
      return new Promise((resolve) => (rule = resolve));
    });
    expect(readSseEvents((await guarded.next()) as string)).toHaveLength(2);
    expect(readSseEvents((await guarded.next()) as string)).toHaveLength(1);
    const tail = guarded.next();
    // The judge has the whole answer, and nothing of the tail went out before it ruled.
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(judged?.choices[0].message.content).toBe("The secret is swordfish.");
    expect(judged?.usage).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    rule(undefined);
    const events = readSseEvents((await tail) as string);
    expect(events).toHaveLength(3);
    expect(JSON.parse(events[0]!).choices[0].finish_reason).toBe("stop");
    expect(events[2]).toBe("[DONE]");
    expect(await guarded.next()).toBeNull();
  });

  it("sends the judge's replacement instead of the held events", async () => {
    const guarded = guardStreamTail(
      sourceOf(pieces()),
      "chat",
      async () => 'data: {"error":{"type":"hooks_failed"}}\n\n',
    );
    const out = await drain(guarded);
    const events = out.flatMap(readSseEvents);
    expect(events.at(-1)).toBe('{"error":{"type":"hooks_failed"}}');
    expect(events).not.toContain("[DONE]");
    expect(events.some((data) => data.includes('"finish_reason":"stop"'))).toBe(false);
  });

  it("does not judge a stream that ended without a whole answer (cut, or failed with an error event)", async () => {
    let calls = 0;
    const judge = async () => {
      calls++;
      return "replaced";
    };
    const cut = await drain(guardStreamTail(sourceOf([chunk({ content: "Half an" })]), "chat", judge));
    expect(cut.flatMap(readSseEvents)).toHaveLength(1);
    const failed = await drain(
      guardStreamTail(
        sourceOf([chunk({ content: "Half" }), 'data: {"error":{"message":"upstream failed"}}\n\n']),
        "chat",
        judge,
      ),
    );
    expect(failed.join("")).toContain("upstream failed");
    expect(calls).toBe(0);
  });

  it("passes cancellation to the source", async () => {
    const source = sourceOf(pieces());
    const guarded = guardStreamTail(source, "chat", async () => undefined);
    await guarded.next();
    await guarded.cancel();
    expect(source.cancelled).toBe(true);
    expect(await guarded.next()).toBeNull();
  });
});

describe("readWholeStream", () => {
  it("reads every event and assembles the answer", async () => {
    const whole = await readWholeStream(sourceOf(pieces()), "chat", new AbortController().signal);
    expect(readSseEvents(whole.text)).toHaveLength(6);
    expect((whole.answer as any).choices[0].message.content).toBe("The secret is swordfish.");
  });

  it("completions chunks spell a text completion", async () => {
    const text = (value: string, finish: string | null = null) =>
      `data: ${JSON.stringify({ id: "cmpl-1", object: "text_completion", choices: [{ index: 0, text: value, finish_reason: finish }] })}\n\n`;
    const whole = await readWholeStream(
      sourceOf([text("Hello"), text(" world", "stop"), "data: [DONE]\n\n"]),
      "text",
      new AbortController().signal,
    );
    expect((whole.answer as any).choices[0].text).toBe("Hello world");
  });
});
