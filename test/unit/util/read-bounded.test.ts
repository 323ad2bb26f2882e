import { describe, expect, it } from "vitest";
import { boundedResponse, readBounded } from "../../../core/util/read-bounded.ts";

/** The shared bounded reader: whole bodies refused past the limit, fetch answers bounded as they are read. */

const bytes = (text: string) => new TextEncoder().encode(text);
const tooLarge = () => new Error("too large");

/** A web stream of `chunks`, noting whether its reader cancelled it. */
function streamOf(chunks: string[]) {
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (state.pulled === chunks.length) return controller.close();
      controller.enqueue(bytes(chunks[state.pulled++]!));
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

describe("readBounded", () => {
  it("reads a body within the limit, from a web stream or an async iterable", async () => {
    expect((await readBounded(streamOf(["ab", "cd"]).stream, 4, tooLarge)).toString()).toBe("abcd");
    async function* chunks() {
      yield bytes("ab");
      yield bytes("cd");
    }
    expect((await readBounded(chunks(), 4, tooLarge)).toString()).toBe("abcd");
  });

  it("stops at the first chunk past the limit and cancels the rest", async () => {
    const { stream, state } = streamOf(["abc", "def", "ghi", "jkl"]);
    await expect(readBounded(stream, 5, tooLarge)).rejects.toThrow("too large");
    expect(state.cancelled).toBe(true);
    expect(state.pulled).toBeLessThan(4);
    let finished = false;
    async function* endless() {
      try {
        for (;;) yield bytes("x".repeat(1000));
      } finally {
        finished = true;
      }
    }
    await expect(readBounded(endless(), 10_000, tooLarge)).rejects.toThrow("too large");
    expect(finished).toBe(true);
  });
});

describe("boundedResponse", () => {
  const answer = (chunks: string[], headers: Record<string, string> = {}) => {
    const { stream, state } = streamOf(chunks);
    return { response: new Response(stream, { status: 200, headers }), state };
  };

  it("passes an answer within the limit through unchanged, URL included", async () => {
    const original = answer(['{"a":', "1}"], { "content-type": "application/json" }).response;
    Object.defineProperty(original, "url", { value: "https://upstream.example/mcp" });
    const bounded = boundedResponse(original, 100, tooLarge);
    expect(bounded.url).toBe("https://upstream.example/mcp");
    expect(await bounded.json()).toEqual({ a: 1 });
  });

  it("refuses a declared content-length over the limit before reading", () => {
    const { response, state } = answer(["x"], { "content-length": "1000" });
    expect(() => boundedResponse(response, 10, tooLarge)).toThrow("too large");
    expect(state.pulled).toBe(0);
  });

  it("errors the body, and cancels the upstream, once it passes the limit", async () => {
    const { response, state } = answer(["x".repeat(6), "x".repeat(6), "x".repeat(6)]);
    await expect(boundedResponse(response, 10, tooLarge).text()).rejects.toThrow("too large");
    expect(state.cancelled).toBe(true);
  });

  it("bounds an event stream per event, however long it runs", async () => {
    const event = (n: number) => `data: ${"y".repeat(40)}${n}\n\n`;
    const many = Array.from({ length: 50 }, (_, n) => event(n));
    const sse = { "content-type": "text/event-stream" };
    const long = await boundedResponse(answer(many, sse).response, 64, tooLarge).text();
    expect(long).toBe(many.join(""));
    // A blank line split across chunks (LF and CRLF) still ends the event.
    const split = ["data: a\n", "\ndata: b\r\n", "\r\n", `data: ${"z".repeat(50)}\n\n`];
    expect(await boundedResponse(answer(split, sse).response, 64, tooLarge).text()).toBe(split.join(""));
    const huge = [`data: ${"z".repeat(40)}`, "z".repeat(40), "z".repeat(40), "\n\n"];
    await expect(boundedResponse(answer(huge, sse).response, 64, tooLarge).text()).rejects.toThrow("too large");
  });
});
