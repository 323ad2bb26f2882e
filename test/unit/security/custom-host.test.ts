import { describe, expect, it } from "vitest";
import { checkCustomHost, checkCustomHostSyntax, parseTrustedHosts } from "../../../core/security/custom-host.ts";

const none = parseTrustedHosts([]);

const HOSTILE = [
  "file:///etc/passwd",
  "gopher://example.com/",
  "ftp://example.com/",
  "javascript:alert(1)",
  "data:text/plain,hi",
  "http://user:pass@example.com/",
  "https://example.com/#frag",
  "http://127.0.0.1/",
  "http://127.1/",
  "http://2130706433/",
  "http://0x7f000001/",
  "http://0177.0.0.1/",
  "http://017700000001/",
  "http://0.0.0.0/",
  "http://0/",
  "http://localhost:8080/",
  "http://app.localhost/",
  "http://10.0.0.5/",
  "http://172.16.3.4/",
  "http://192.168.1.1/",
  "http://100.64.0.1/",
  "http://169.254.169.254/latest/meta-data/",
  "http://[::1]/",
  "http://[::]/",
  "http://[::ffff:127.0.0.1]/",
  "http://[::ffff:7f00:1]/",
  "http://[::ffff:169.254.169.254]/",
  "http://[fd00:ec2::254]/",
  "http://[fe80::1]/",
  "http://[fc00::1]/",
  "http://metadata.google.internal/computeMetadata/v1/",
  "http://metadata/",
  "http://instance-data/",
  "http://224.0.0.1/",
  "http://255.255.255.255/",
  "http://198.18.0.1/",
  "not a url",
];

describe("custom host SSRF guard", () => {
  it.each(HOSTILE)("rejects %s", (url) => {
    expect(() => checkCustomHostSyntax(url, none)).toThrow(/Custom host|custom host/);
  });

  it("accepts public https hosts and addresses", () => {
    expect(checkCustomHostSyntax("https://api.example.com/v1", none).hostname).toBe("api.example.com");
    expect(checkCustomHostSyntax("http://8.8.8.8:8080/v1", none).port).toBe("8080");
  });

  it("TRUSTED_CUSTOM_HOSTS admits listed names, addresses and CIDRs only", () => {
    const trusted = parseTrustedHosts(["127.0.0.1", "10.1.0.0/16", "llm.internal"]);
    expect(() => checkCustomHostSyntax("http://127.0.0.1:9000/v1", trusted)).not.toThrow();
    expect(() => checkCustomHostSyntax("http://10.1.2.3/", trusted)).not.toThrow();
    expect(() => checkCustomHostSyntax("http://llm.internal/", trusted)).not.toThrow();
    expect(() => checkCustomHostSyntax("http://10.2.0.1/", trusted)).toThrow();
    expect(() => checkCustomHostSyntax("http://[::ffff:127.0.0.1]/", trusted)).not.toThrow();
  });

  it("rejects host names that resolve to forbidden addresses", async () => {
    await expect(checkCustomHost("http://localhost.:1234/", none)).rejects.toThrow();
  });
});

describe("IPv6 ranges that embed an IPv4 address", () => {
  it.each([
    "http://[::127.0.0.1]/",
    "http://[::7f00:1]/",
    "http://[::a9fe:a9fe]/",
    "http://[::ffff:0:7f00:1]/",
    "http://[::ffff:0:a9fe:a9fe]/",
    "http://[0:0:0:0:0:ffff:7f00:1]/",
  ])("rejects %s (IPv4-compatible ::/96, IPv4-translated ::ffff:0:0:0/96, IPv4-mapped)", (url) => {
    expect(() => checkCustomHostSyntax(url, none)).toThrow(/Custom host rejected/);
  });

  it("still accepts public IPv4 and IPv6 addresses", () => {
    expect(() => checkCustomHostSyntax("http://8.8.8.8/", none)).not.toThrow();
    expect(() => checkCustomHostSyntax("http://[2606:4700:4700::1111]/", none)).not.toThrow();
  });
});
