import { describe, expect, it } from "vitest";
import { RelayedChunkCheck, TypedEventCheck } from "../../../../../core/inference/gateway/stream/strict-streams.ts";
import { UpstreamError } from "../../../../../core/providers/types.ts";

const bytes = (text: string) => Buffer.from(text);
/** What a check passed on, as text. */
const sent = (pending: Array<string | Uint8Array>) =>
  pending.map((piece) => (typeof piece === "string" ? piece : Buffer.from(piece).toString())).join("");
const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe("a relayed stream that may be continued", () => {
  it("passes chunks as the provider wrote them, and [DONE] only once a choice finished", () => {
    const check = new RelayedChunkCheck();
    const pending: Array<string | Uint8Array> = [];
    check.pass(bytes(chunk({ content: "Hi" }) + chunk({}, "stop") + "data: [DONE]\n\n"), pending);
    check.end(pending);
    expect(sent(pending)).toBe(`${chunk({ content: "Hi" })}${chunk({}, "stop")}data: [DONE]\n\n`);
  });

  it("fails on an error chunk or one that is not JSON, after the chunks before it", () => {
    for (const bad of ['data: {"error":{"message":"boom","code":"server_error"}}\n\n', 'data: {"choices":[\n\n']) {
      const check = new RelayedChunkCheck();
      const pending: Array<string | Uint8Array> = [];
      expect(() => check.pass(bytes(chunk({ content: "Hi" }) + bad), pending)).toThrow(UpstreamError);
      expect(sent(pending)).toBe(chunk({ content: "Hi" }));
    }
  });

  it("reads events with CRs or comments through the general decoder", () => {
    const check = new RelayedChunkCheck();
    const pending: Array<string | Uint8Array> = [];
    check.pass(bytes(`: keep-alive\n\n${chunk({ content: "Hi" }).replace(/\n/g, "\r\n")}`), pending);
    check.pass(bytes(chunk({}, "stop")), pending);
    check.end(pending);
    expect(sent(pending)).toBe(`${chunk({ content: "Hi" })}${chunk({}, "stop")}data: [DONE]\n\n`);
  });

  it("fails a stream that ended without a finish, even with [DONE]", () => {
    const check = new RelayedChunkCheck();
    const pending: Array<string | Uint8Array> = [];
    check.pass(bytes(chunk({ content: "Hi" }) + "data: [DONE]\n\n"), pending);
    expect(() => check.end(pending)).toThrow(/ended before the answer was finished/);
  });
});

describe("an event-typed stream that may be continued", () => {
  it("fails on error and response.failed events", () => {
    expect(() => new TypedEventCheck().pass({ type: "error", message: "boom" })).toThrow(/boom/);
    expect(() =>
      new TypedEventCheck().pass({ type: "response.failed", response: { error: { message: "bad", code: "x" } } }),
    ).toThrow(/bad/);
  });

  it("finishes only with its terminal event, and not when its last events report a failure", () => {
    const check = new TypedEventCheck();
    check.pass({ type: "response.output_text.delta", delta: "Hi" });
    expect(check.finishes([])).toBe(false);
    expect(check.finishes([{ type: "response.output_item.done" }, { type: "response.failed" }])).toBe(false);
    expect(check.finishes([{ type: "message_delta" }, { type: "message_stop" }])).toBe(true);
    check.pass({ type: "response.completed" });
    expect(check.finishes([])).toBe(true);
  });
});
