import { describe, expect, it } from "vitest";
import { redirectUriProblem, redirectUrisProblem } from "../../../../core/features/mcp/oauth/redirect-uris.ts";

describe("OAuth redirect_uri validation (RFC 7591 registration, MCP authorization spec)", () => {
  it.each([
    "https://client.example.com/callback",
    "https://client.example.com:8443/cb?x=1",
    "http://localhost:1234/cb",
    "http://127.0.0.1:33418/oauth/callback",
    "http://[::1]:9000/cb",
  ])("accepts %s", (uri) => {
    expect(redirectUriProblem(uri)).toBeUndefined();
  });

  it.each([
    ["http://example.com/cb", /not loopback/],
    ["http://localhost.evil.com/cb", /not loopback/],
    ["https://client.example.com/cb#frag", /fragment/],
    ["https://client.example.com/cb#", /fragment/],
    ["https://*.example.com/cb", /wildcard/],
    ["https://client.example.com/*", /wildcard/],
    ["/callback", /absolute/],
    ["callback", /absolute/],
    ["https:client.example.com/cb", /absolute/],
    ["javascript:alert(1)", /https/],
    ["data:text/html,hi", /https/],
    ["ftp://client.example.com/cb", /https/],
    ["https://user:pass@client.example.com/cb", /user information/],
    ["https://client.example.com/c b", /whitespace/],
    ["", /non-empty/],
    [42, /non-empty/],
  ])("rejects %s", (uri, reason) => {
    expect(redirectUriProblem(uri)).toMatch(reason);
  });

  it("needs a non-empty list of at most ten, each valid", () => {
    expect(redirectUrisProblem(undefined)).toMatch(/non-empty array/);
    expect(redirectUrisProblem([])).toMatch(/non-empty array/);
    expect(redirectUrisProblem("https://a.example.com/cb")).toMatch(/non-empty array/);
    const eleven = Array.from({ length: 11 }, (_, i) => `https://a.example.com/cb${i}`);
    expect(redirectUrisProblem(eleven)).toMatch(/at most 10/);
    expect(redirectUrisProblem(eleven.slice(0, 10))).toBeUndefined();
    expect(redirectUrisProblem(["https://a.example.com/cb", "http://example.com/cb"])).toMatch(/redirect_uris\[1\]/);
  });
});
