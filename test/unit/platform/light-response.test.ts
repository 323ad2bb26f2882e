import { describe, expect, it } from "vitest";
import { RecordHeaders } from "../../../core/platform/local/light-response.ts";

describe("RecordHeaders (the local server's response headers, kept as a record)", () => {
  it("reads, sets and iterates like Headers, sorted and in lower case", () => {
    const record = { "x-b": "2", "content-type": "application/json" };
    const headers = new RecordHeaders(record) as unknown as Headers;
    expect(headers).toBeInstanceOf(Headers);
    headers.set("X-Trace", " t ");
    headers.append("x-b", "3");
    expect(headers.get("X-B")).toBe("2, 3");
    expect(headers.has("x-trace")).toBe(true);
    expect([...headers]).toEqual([
      ["content-type", "application/json"],
      ["x-b", "2, 3"],
      ["x-trace", "t"],
    ]);
    // As Headers does: a copy holds the same entries.
    expect(Object.fromEntries(new Headers(headers))).toEqual(Object.fromEntries(headers));
    headers.delete("x-b");
    expect(headers.get("x-b")).toBeNull();
  });

  it("keeps cookies apart and refuses what Headers refuses", () => {
    const headers = new RecordHeaders({}) as unknown as Headers;
    headers.append("set-cookie", "a=1");
    headers.append("set-cookie", "b=2");
    expect(headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect([...headers]).toEqual([
      ["set-cookie", "a=1"],
      ["set-cookie", "b=2"],
    ]);
    expect(() => headers.set("bad name", "x")).toThrow(TypeError);
    expect(() => headers.set("x-a", "line\r\nbreak")).toThrow(TypeError);
  });
});
