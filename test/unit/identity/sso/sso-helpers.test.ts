import { describe, expect, it } from "vitest";
import { publicJwks } from "../../../../core/identity/sso/client-keys.ts";
import { safeRedirect } from "../../../../core/identity/sso/login-flow.ts";
import { csrfTokenOf, passesCsrf, readCookie, sessionCookies } from "../../../../core/identity/sso/sessions.ts";

describe("SSO helpers", () => {
  it("allows only same-site relative redirects", () => {
    expect(safeRedirect(undefined)).toBe("/");
    expect(safeRedirect("/console?x=1")).toBe("/console?x=1");
    for (const bad of ["https://evil.example", "//evil.example", "/\\evil.example", "console", "/a b", "/a\u0001"]) {
      expect(safeRedirect(bad), bad).toBeUndefined();
    }
  });

  it("reads one cookie among several", () => {
    expect(readCookie("a=1; gateway_session=abc; b=2", "gateway_session")).toBe("abc");
    expect(readCookie("xgateway_session=abc", "gateway_session")).toBeUndefined();
    expect(readCookie(null, "gateway_session")).toBeUndefined();
  });

  it("drops Secure only for a gateway at http://localhost", () => {
    const session = { id: "gws-x", csrfToken: "t" };
    expect(sessionCookies(session, new URL("http://localhost:8787"), 60)[0]).not.toContain("Secure");
    expect(sessionCookies(session, new URL("http://127.0.0.1:8787"), 60)[0]).toContain("; Secure");
    expect(sessionCookies(session, new URL("https://gw.example"), 60)[0]).toBe(
      "gateway_session=gws-x; HttpOnly; Secure; SameSite=Lax; Path=/; Max-Age=60",
    );
  });

  it("passes CSRF with the session's token or the gateway's origin only", () => {
    const headers = (entries: Record<string, string>) => new Headers(entries);
    const base = { method: "POST", origin: "https://gw.example" };
    expect(passesCsrf("s1", { ...base, headers: headers({ "x-gateway-csrf": csrfTokenOf("s1") }) })).toBe(true);
    expect(passesCsrf("s1", { ...base, headers: headers({ "x-gateway-csrf": csrfTokenOf("s2") }) })).toBe(false);
    expect(passesCsrf("s1", { ...base, headers: headers({ origin: "https://gw.example" }) })).toBe(true);
    expect(passesCsrf("s1", { ...base, headers: headers({ origin: "https://evil.example" }) })).toBe(false);
    expect(passesCsrf("s1", { ...base, headers: headers({}) })).toBe(false);
  });

  it("shows only the public members of a private key set", () => {
    const shown = publicJwks({
      keys: [{ kty: "RSA", n: "n", e: "AQAB", d: "d", p: "p", q: "q", dp: "1", dq: "2", qi: "3" }],
    });
    expect(shown).toEqual({ keys: [{ kty: "RSA", n: "n", e: "AQAB" }] });
  });
});
