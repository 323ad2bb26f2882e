import { describe, expect, it } from "vitest";
import { realtimeCost } from "../../../../core/inference/realtime/cost.ts";
import { relaySession } from "../../../../core/inference/realtime/relay.ts";
import { closeCodeFor, type RelaySocket } from "../../../../core/inference/realtime/socket.ts";
import { RealtimeUsageMeter } from "../../../../core/inference/realtime/usage.ts";

/** An in-memory socket: what was sent to it, how it was closed; `flush` completes its pending sends. */
class FakeSocket implements RelaySocket {
  sent: Array<{ data: Uint8Array | string; binary: boolean }> = [];
  pending: Array<() => void> = [];
  closedWith?: [number, string];
  paused = false;
  autoFlush = true;
  #message?: (data: Uint8Array | string, binary: boolean) => void;
  #close?: (code: number, reason: string) => void;
  send(data: Uint8Array | string, binary: boolean, sent: () => void) {
    this.sent.push({ data, binary });
    if (this.autoFlush) sent();
    else this.pending.push(sent);
  }
  close(code: number, reason: string) {
    this.closedWith ??= [code, reason];
  }
  pause() {
    this.paused = true;
  }
  resume() {
    this.paused = false;
  }
  onMessage(listener: (data: Uint8Array | string, binary: boolean) => void) {
    this.#message = listener;
  }
  onClose(listener: (code: number, reason: string) => void) {
    this.#close = listener;
  }
  receive(data: Uint8Array | string, binary = false) {
    this.#message!(data, binary);
  }
  peerClosed(code: number, reason = "") {
    this.#close!(code, reason);
  }
  flush() {
    for (const sent of this.pending.splice(0)) sent();
  }
}

const LIMITS = { idleMs: 60_000, maxSessionMs: 60_000, maxBufferedBytes: 4096 };

describe("relaySession", () => {
  it("relays both ways unchanged and in order, and closes the other side with the same code", async () => {
    const client = new FakeSocket();
    const upstream = new FakeSocket();
    const ended = relaySession(client, upstream, LIMITS);
    client.receive('{"type":"a"}');
    upstream.receive(Buffer.from([1, 2]), true);
    client.receive('{"type":"b"}');
    expect(upstream.sent.map((frame) => frame.data)).toEqual(['{"type":"a"}', '{"type":"b"}']);
    expect(client.sent).toEqual([{ data: Buffer.from([1, 2]), binary: true }]);
    upstream.peerClosed(4002, "bye");
    expect(await ended).toEqual({ code: 4002, reason: "bye", by: "upstream" });
    expect(client.closedWith).toEqual([4002, "bye"]);
    expect(upstream.closedWith).toBeUndefined();
  });

  it("maps codes that cannot be sent: no code is normal, a lost provider is 1011 to the client", () => {
    expect(closeCodeFor(1005, "upstream")).toBe(1000);
    expect(closeCodeFor(1006, "upstream")).toBe(1011);
    expect(closeCodeFor(1006, "client")).toBe(1000);
    expect(closeCodeFor(1001, "client")).toBe(1001);
    expect(closeCodeFor(4999, "client")).toBe(4999);
  });

  it("pauses a sender whose reader lags, resumes it when drained, and closes 1013 past the limit", async () => {
    const client = new FakeSocket();
    const upstream = new FakeSocket();
    upstream.autoFlush = false;
    const ended = relaySession(client, upstream, LIMITS);
    client.receive("x".repeat(1500));
    expect(client.paused).toBe(true);
    upstream.flush();
    expect(client.paused).toBe(false);
    for (let i = 0; i < 3; i++) client.receive("y".repeat(1500));
    expect(await ended).toMatchObject({ code: 1013, by: "gateway" });
    expect(client.closedWith?.[0]).toBe(1013);
    expect(upstream.closedWith?.[0]).toBe(1013);
  });

  it("closes both sides with 1001 when the session is idle", async () => {
    const client = new FakeSocket();
    const upstream = new FakeSocket();
    const end = await relaySession(client, upstream, { ...LIMITS, idleMs: 20 });
    expect(end).toEqual({ code: 1001, reason: "session idle", by: "gateway" });
    expect(client.closedWith).toEqual([1001, "session idle"]);
    expect(upstream.closedWith).toEqual([1001, "session idle"]);
  });
});

describe("realtime usage and cost", () => {
  // The usage object of OpenAI's `response.done` server event (Realtime API reference).
  const done = {
    type: "response.done",
    response: {
      usage: {
        total_tokens: 300,
        input_tokens: 120,
        output_tokens: 180,
        input_token_details: { text_tokens: 20, audio_tokens: 100, cached_tokens: 10 },
        output_token_details: { text_tokens: 30, audio_tokens: 150 },
      },
    },
  };

  it("sums every response.done and reads the session's model, skipping audio deltas", () => {
    const meter = new RealtimeUsageMeter();
    meter.observe(
      Buffer.from(JSON.stringify({ type: "session.created", session: { model: "gpt-realtime-2025-08-28" } })),
      false,
    );
    meter.observe(Buffer.from('{"type":"response.output_audio.delta","delta":"AAAA"}'), false);
    meter.observe(Buffer.from(JSON.stringify(done)), false);
    meter.observe(JSON.stringify(done), false);
    meter.observe(Buffer.from(JSON.stringify(done)), true);
    expect(meter.model).toBe("gpt-realtime-2025-08-28");
    expect(meter.usage).toEqual({
      responses: 2,
      inputTokens: 240,
      outputTokens: 360,
      totalTokens: 600,
      input: { text: 40, audio: 200, cachedText: 20, cachedAudio: 0 },
      output: { text: 60, audio: 300 },
    });
  });

  it("prices audio tokens at the audio price, cached input at the cached price", async () => {
    const meter = new RealtimeUsageMeter();
    meter.add(done);
    const cost = await realtimeCost("openai", "gpt-realtime-2025-08-28", meter.usage);
    // text in 10 x $4 + cached 10 x $0.40 + audio in 100 x $32; out text 30 x $16 + audio 150 x $64 (per million)
    expect(cost.input).toBeCloseTo((10 * 4 + 10 * 0.4 + 100 * 32) / 1e6, 12);
    expect(cost.output).toBeCloseTo((30 * 16 + 150 * 64) / 1e6, 12);
    expect(cost.priced).toBe(true);
    const preview = await realtimeCost("azure-openai", "gpt-4o-realtime-preview-2024-10-01", meter.usage);
    expect(preview.output).toBeCloseTo((30 * 20 + 150 * 200) / 1e6, 12);
    expect((await realtimeCost("openai", "not-a-realtime-model", meter.usage)).priced).toBe(false);
  });
});
