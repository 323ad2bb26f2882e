import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { gatewayResponse, plainHeadersOf, withHeaders } from "../../../core/http/response-headers.ts";
import { SSE_SOURCE, type SseSource, sseResponse, sseSourceOf } from "../../../core/http/sse-source.ts";

const source = (): SseSource => ({ next: async () => null, cancel: async () => {} });

describe("response headers of gateway-built responses", () => {
  it("adds headers to the parts without materialising Headers, and the answer carries them all", async () => {
    const response = gatewayResponse('{"ok":true}', 200, { "content-type": "application/json", "x-a": "1" });
    const added = withHeaders(withHeaders(response, { "x-b": "2" }), { "x-a": "3", "x-trace": "t" });
    expect(plainHeadersOf(added)).toEqual({
      "content-type": "application/json",
      "x-a": "3",
      "x-b": "2",
      "x-trace": "t",
    });
    expect(added.status).toBe(200);
    expect(Object.fromEntries(added.headers)).toEqual({
      "content-type": "application/json",
      "x-a": "3",
      "x-b": "2",
      "x-trace": "t",
    });
    expect(await added.json()).toEqual({ ok: true });
  });

  it("is the only way core/ changes a response's headers (a change on `response.headers` would be lost)", () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), "../../../core");
    const offenders: string[] = [];
    for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts") || file.endsWith("response-headers.ts")) continue;
      const source = readFileSync(join(root, file), "utf8");
      // Request headers are read, never changed; `new Headers(...)` copies are built and changed freely.
      for (const match of source.matchAll(/(\w+)\.headers\.(set|append|delete)\(/g))
        offenders.push(`${file}: ${match[0]}`);
    }
    expect(offenders).toEqual([]);
  });

  it("sets headers on any other response, copying one whose headers are immutable", async () => {
    const plain = new Response("a", { headers: { "x-a": "1" } });
    expect(withHeaders(plain, { "x-b": "2" })).toBe(plain);
    expect(plain.headers.get("x-b")).toBe("2");

    const immutable = Response.redirect("http://127.0.0.1/elsewhere", 302);
    const copied = withHeaders(immutable, { "x-b": "2" });
    expect(copied).not.toBe(immutable);
    expect(copied.status).toBe(302);
    expect(copied.headers.get("location")).toBe("http://127.0.0.1/elsewhere");
    expect(copied.headers.get("x-b")).toBe("2");
  });

  it("carries a streamed answer's source to the new response, on both paths", () => {
    const streamed = sseResponse(source(), 200, { "content-type": "text/event-stream" });
    const added = withHeaders(streamed, { "x-trace": "t" });
    expect(sseSourceOf(added)).toBe(sseSourceOf(streamed));
    expect(plainHeadersOf(added)).toMatchObject({ "x-trace": "t" });

    const immutable = Response.redirect("http://127.0.0.1/", 302);
    Object.defineProperty(immutable, SSE_SOURCE, { value: source() });
    expect(sseSourceOf(withHeaders(immutable, { "x-b": "2" }))).toBe(sseSourceOf(immutable));
  });
});
