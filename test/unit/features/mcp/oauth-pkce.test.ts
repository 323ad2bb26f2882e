import { createHash, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { isS256Challenge, s256Challenge, verifyPkce } from "../../../../core/features/mcp/oauth/pkce.ts";

describe("PKCE S256", () => {
  it("matches RFC 7636 appendix B's example", () => {
    const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    expect(s256Challenge(verifier)).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    expect(verifyPkce(verifier, "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")).toBe(true);
  });

  it("refuses a wrong verifier, a plain challenge and malformed values", () => {
    const verifier = randomBytes(32).toString("base64url");
    const challenge = createHash("sha256").update(verifier).digest("base64url");
    expect(verifyPkce(verifier, challenge)).toBe(true);
    expect(verifyPkce(randomBytes(32).toString("base64url"), challenge)).toBe(false);
    // `plain` method: the challenge is the verifier itself; never accepted.
    expect(verifyPkce(verifier, verifier)).toBe(false);
    expect(verifyPkce("short", s256Challenge("short"))).toBe(false);
    expect(verifyPkce(`${verifier}!`, challenge)).toBe(false);
    expect(verifyPkce("a".repeat(129), s256Challenge("a".repeat(129)))).toBe(false);
    expect(isS256Challenge(challenge)).toBe(true);
    expect(isS256Challenge(`${challenge}=`)).toBe(false);
    expect(isS256Challenge("abc")).toBe(false);
  });
});
