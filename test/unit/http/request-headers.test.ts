import { describe, expect, it } from "vitest";
import { NodeHeaders } from "../../../core/http/request-headers.ts";

describe("NodeHeaders (Node's parsed request headers as a HeaderSource)", () => {
  const headers = new NodeHeaders({ "content-type": "application/json", "x-team": ["a", "b"] });

  it("reads names in any case and joins repeated headers", () => {
    expect(headers.get("content-type")).toBe("application/json");
    expect(headers.get("Content-Type")).toBe("application/json");
    expect(headers.get("x-team")).toBe("a, b");
    expect(headers.has("X-Team")).toBe(true);
    expect([...headers]).toEqual([
      ["content-type", "application/json"],
      ["x-team", "a, b"],
    ]);
  });

  it("finds nothing for names that are only inherited object properties (clients choose forwarded names)", () => {
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty", "Constructor"]) {
      expect(headers.get(name)).toBeNull();
      expect(headers.has(name)).toBe(false);
    }
  });
});
