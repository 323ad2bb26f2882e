import { afterEach, describe, expect, it, vi } from "vitest";
import { urlsInText } from "../../../../../core/inference/guardrails/checks/valid-urls.ts";
import { checkInput } from "./input.ts";
import { runCheck } from "./run-check.ts";

// DNS answers for the onlyDNS tests: a name in `existing` resolves, any other does not exist.
const dns = vi.hoisted(() => ({ existing: new Set<string>(), queries: [] as string[] }));
vi.mock("node:dns/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:dns/promises")>();
  class Resolver {
    cancel() {}
    async resolve4(host: string) {
      dns.queries.push(host);
      if (dns.existing.has(host)) return ["93.184.215.14"];
      throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    }
    async resolve6(host: string): Promise<string[]> {
      throw Object.assign(new Error(`queryAaaa ENOTFOUND ${host}`), { code: "ENOTFOUND" });
    }
  }
  return { ...real, Resolver };
});

afterEach(() => {
  dns.existing.clear();
  dns.queries.length = 0;
});

const answer = (text: string) => checkInput({ phase: "output", text });

describe("default.validUrls", () => {
  it("finds URLs in prose and markdown without the sentence's punctuation", () => {
    const text =
      "See [the guide](https://docs.example.com/guide_(v2)) and https://example.org/pricing?plan=pro. " +
      "Also (https://status.example.net/), **https://x.io** and http://[::1]:8080/health.";
    expect(urlsInText(text)).toEqual([
      "https://docs.example.com/guide_(v2)",
      "https://example.org/pricing?plan=pro",
      "https://status.example.net/",
      "https://x.io",
      "http://[::1]:8080/health",
    ]);
  });

  it("passes an answer whose URLs are all well-formed http(s) URLs", async () => {
    const text =
      "You can read the release notes at https://github.com/nodejs/node/releases and the docs at https://nodejs.org/en/docs. " +
      "Locally the app runs on http://localhost:3000/ or http://127.0.0.1:3000/.";
    const result = await runCheck("default.validUrls", {}, answer(text));
    expect(result).toEqual({
      verdict: true,
      explanation: "All 4 URLs are valid.",
      data: { urls: 4, invalid: [], checked_dns: false, not: false },
    });
  });

  it("fails bad hosts and other schemes, naming hosts, never the URLs' paths or queries", async () => {
    const text =
      "Download it from https://files_server.internal/app.zip?token=s3cr3t-tok, or ftp://mirror.example.com/app.zip, " +
      "or https://example/app.zip, or https://cdn.example.com/app.zip.";
    const result = await runCheck("default.validUrls", {}, answer(text));
    expect(result.verdict).toBe(false);
    expect(result.data?.invalid).toEqual([
      { host: "files_server.internal", problem: "not a valid host name" },
      { host: "mirror.example.com", problem: "ftp: URL" },
      { host: "example", problem: "not a valid host name" },
    ]);
    expect(JSON.stringify(result)).not.toContain("s3cr3t");
  });

  it("passes a text without URLs; not inverts", async () => {
    const none = await runCheck("default.validUrls", {}, answer("Restart the router and try again."));
    expect(none).toMatchObject({ verdict: true, explanation: "The text has no URLs." });
    const inverted = await runCheck("default.validUrls", { not: true }, answer("Go to https://example.com/login"));
    expect(inverted.verdict).toBe(false);
  });

  it("onlyDNS: also resolves each host name once, and fails one that does not exist", async () => {
    dns.existing.add("docs.python.org");
    const text =
      "The tutorial is at https://docs.python.org/3/tutorial/ and https://docs.python.org/3/library/, " +
      "the cheat sheet at https://python-cheatsheet.madeup-domain.dev/ and the server at http://10.0.0.12/.";
    const result = await runCheck("default.validUrls", { onlyDNS: true }, answer(text));
    expect(result.verdict).toBe(false);
    expect(result.data?.invalid).toEqual([
      { host: "python-cheatsheet.madeup-domain.dev", problem: "does not resolve in DNS" },
    ]);
    // IP addresses are not looked up; each name once (and then from the cache).
    expect(dns.queries.sort()).toEqual(["docs.python.org", "python-cheatsheet.madeup-domain.dev"]);
    dns.existing.add("python-cheatsheet.madeup-domain.dev"); // cached as missing for a minute
    expect((await runCheck("default.validUrls", { onlyDNS: true }, answer(text))).verdict).toBe(false);
  });

  it("onlyDNS: refuses to look up more than 25 hosts", async () => {
    const text = Array.from({ length: 30 }, (_, i) => `https://site${i}.example.com/`).join(" ");
    const result = await runCheck("default.validUrls", { onlyDNS: true }, answer(text));
    expect(result).toMatchObject({ verdict: false, data: { hosts: 30 } });
    expect(dns.queries).toEqual([]);
  });

  it("finds and judges the URLs of 1 MB in reasonable time", async () => {
    const text = "Read more at https://example.com/articles?id=42 and (see https://docs.example.org/x). ".repeat(
      12_000,
    );
    const started = performance.now();
    const result = await runCheck("default.validUrls", {}, answer(text));
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(result.data?.urls).toBe(24_000);
    expect(result.verdict).toBe(true);
  });
});
