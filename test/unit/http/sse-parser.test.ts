import { describe, expect, it } from "vitest";
import { decodeNdjson, decodeSse } from "../../../core/providers/stream/sse.ts";

async function* chunks(...parts: string[]) {
  for (const part of parts) yield new TextEncoder().encode(part);
}

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

describe("SSE decoder", () => {
  it("handles events split across chunks, CRLF, comments, multi-line data and a missing final blank line", async () => {
    const events = await collect(
      decodeSse(chunks("event: a\r\nda", "ta: 1\r", "\n\r\n: comment\n\ndata: x\ndata: y\n\n", "data: last")),
    );
    expect(events).toEqual([
      { event: "a", data: "1" },
      { event: undefined, data: "x\ny" },
      { event: undefined, data: "last" },
    ]);
  });

  it("reads LF-only chunks and chunks with CR the same way, a line end split between chunks included", async () => {
    const events = await collect(
      decodeSse(
        chunks("data: 1\n", "\ndata: 2\n\nevent: e\r\ndata: 3\r", "\n\r\ndata: 4\n", "\n", "data: 5\r\rdata: 6\n\n"),
      ),
    );
    expect(events).toEqual([
      { event: undefined, data: "1" },
      { event: undefined, data: "2" },
      { event: "e", data: "3" },
      { event: undefined, data: "4" },
      { event: undefined, data: "5" },
      { event: undefined, data: "6" },
    ]);
  });

  it("decodes multi-byte characters split between chunks", async () => {
    const bytes = new TextEncoder().encode("data: héllo\n\n");
    async function* split() {
      yield bytes.slice(0, 8);
      yield bytes.slice(8);
    }
    expect(await collect(decodeSse(split()))).toEqual([{ event: undefined, data: "héllo" }]);
  });

  it("ndjson yields one event per line", async () => {
    expect(await collect(decodeNdjson(chunks('{"a":1}\n{"b"', ":2}\n\n", '{"c":3}')))).toEqual([
      { data: '{"a":1}' },
      { data: '{"b":2}' },
      { data: '{"c":3}' },
    ]);
  });
});
