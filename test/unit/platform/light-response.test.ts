import { describe, expect, it } from "vitest";
import { getRequestListener } from "@hono/node-server";
import { installLightResponse, RecordHeaders } from "../../../core/platform/local/light-response.ts";

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

describe("the local server's Response, read by the gateway itself", () => {
  // As the local server installs it: over the adapter's lightweight Response (a global for the process).
  const saved = globalThis.Response;
  getRequestListener(() => new Response(null), { overrideGlobalObjects: true });
  installLightResponse();
  const Light = globalThis.Response;
  globalThis.Response = saved;

  it("answers a string body's text and JSON as given, once, then as used as a fetch Response's", async () => {
    const answer = new Light('{"a":1}', { status: 200, headers: { "content-type": "application/json" } });
    expect(answer.bodyUsed).toBe(false);
    expect(await answer.json()).toEqual({ a: 1 });
    expect(answer.bodyUsed).toBe(true);
    await expect(answer.text()).rejects.toBeInstanceOf(TypeError);
    await expect(answer.arrayBuffer()).rejects.toBeInstanceOf(TypeError);
    expect(() => answer.clone()).toThrow(TypeError);
    const rest = await answer.body!.getReader().read();
    expect(rest.done).toBe(true);
    expect(answer.headers.get("content-type")).toBe("application/json");
    expect(answer.status).toBe(200);
  });

  it("reads other bodies and unread clones as the adapter does", async () => {
    const bytes = new Light(new TextEncoder().encode("hé"));
    expect(await bytes.text()).toBe("hé");
    const text = new Light("plain");
    const copy = text.clone();
    expect(await text.text()).toBe("plain");
    expect(await copy.text()).toBe("plain");
  });
});
