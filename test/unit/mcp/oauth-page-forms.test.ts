import { describe, expect, it } from "vitest";
import { isSameOriginForm } from "../../../core/mcp/oauth/page-forms.ts";

/** The same-origin check of the OAuth pages' form posts (core/mcp/oauth/page-forms.ts), header by header. */
describe("isSameOriginForm", () => {
  const gateway = "https://gateway.example.com";
  const check = (headers: Record<string, string>) => isSameOriginForm(new Headers(headers), gateway);

  it("accepts the gateway's Origin, or no Origin with Sec-Fetch-Site: same-origin", () => {
    expect(check({ origin: gateway })).toBe(true);
    expect(check({ origin: gateway, "sec-fetch-site": "same-origin" })).toBe(true);
    expect(check({ origin: "null", "sec-fetch-site": "same-origin" })).toBe(true);
    expect(check({ "sec-fetch-site": "same-origin" })).toBe(true);
  });

  it("refuses another Origin, a missing one without Sec-Fetch-Site, and any other Sec-Fetch-Site", () => {
    expect(check({})).toBe(false);
    expect(check({ origin: "null" })).toBe(false);
    expect(check({ origin: "https://evil.example.com" })).toBe(false);
    expect(check({ origin: "https://evil.example.com", "sec-fetch-site": "same-origin" })).toBe(false);
    expect(check({ origin: "http://gateway.example.com" })).toBe(false);
    for (const site of ["same-site", "cross-site", "none"]) expect(check({ "sec-fetch-site": site })).toBe(false);
  });
});
