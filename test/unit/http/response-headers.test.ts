import { describe, expect, it } from "vitest";
import { sseResponse, takeSseSource, type SseSource } from "../../../core/inference/gateway/stream/sse-source.ts";
import { withHeaders } from "../../../core/http/response-headers.ts";

const source = (): SseSource => ({ next: async () => null, cancel: async () => {} });

describe("withHeaders", () => {
  it("adds and replaces headers of a response the gateway builds, in place", async () => {
    const response = new Response('{"ok":true}', { headers: { "content-type": "application/json", "x-a": "1" } });
    const added = withHeaders(withHeaders(response, { "x-b": "2" }), { "x-a": "3", "x-trace": "t" });
    expect(added).toBe(response);
    expect(Object.fromEntries(added.headers)).toEqual({
      "content-type": "application/json",
      "x-a": "3",
      "x-b": "2",
      "x-trace": "t",
    });
    expect(await added.json()).toEqual({ ok: true });
  });

  it("copies a response whose headers are immutable", () => {
    const immutable = Response.redirect("http://127.0.0.1/elsewhere", 302);
    const copied = withHeaders(immutable, { "x-b": "2" });
    expect(copied).not.toBe(immutable);
    expect(copied.status).toBe(302);
    expect(copied.headers.get("location")).toBe("http://127.0.0.1/elsewhere");
    expect(copied.headers.get("x-b")).toBe("2");
  });

  it("keeps a streamed answer's source findable (the same Response)", () => {
    const streamed = sseResponse(source(), { "x-gateway-provider": "fake" });
    const added = withHeaders(streamed, { "x-trace": "t" });
    expect(takeSseSource(added)).toBeDefined();
    expect(added.headers.get("x-trace")).toBe("t");
    expect(added.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
  });
});
