import { describe, expect, it } from "vitest";
import { pii } from "../../../../../core/inference/guardrails/checks/pii.ts";
import { checkSpecProblem, findCheck } from "../../../../../core/inference/guardrails/checks/registry.ts";
import type { CheckEnvironment, CheckInput, CheckSpec } from "../../../../../core/inference/guardrails/types.ts";

/** A chat request's input phase over `parts` (the last one is the judged text). */
function chatInput(parts: string[]): CheckInput {
  const unreachable = () => Promise.reject(new Error("default.pii calls nothing"));
  const env: CheckEnvironment = { postJson: unreachable, getJson: unreachable, infer: unreachable };
  return {
    phase: "input",
    route: "chat",
    text: parts.at(-1) ?? "",
    parts,
    request: { model: "gpt-4o-mini", messages: parts.map((content) => ({ role: "user", content })) },
    model: "gpt-4o-mini",
    metadata: {},
    headers: new Headers(),
    signal: new AbortController().signal,
    env,
  };
}

/** Runs the check as the runner does: parameters parsed and checked first. */
async function run(parts: string[], parameters: Record<string, unknown> = {}) {
  const spec: CheckSpec = { id: "default.pii", parameters };
  expect(await checkSpecProblem(spec)).toBeUndefined();
  return pii.run(chatInput(parts), spec.parameters as never);
}

/** What redaction makes of one text. */
async function redacted(text: string, parameters: Record<string, unknown> = {}): Promise<string> {
  const result = await run([text], { ...parameters, redact: true });
  return result.transformedParts?.[0] ?? text;
}

describe("default.pii", () => {
  it("is registered under its id and Portkey's", async () => {
    expect(await findCheck("default.pii")).toBe(pii);
    expect(await findCheck("portkey.pii")).toBe(pii);
  });

  it("fails on PII with counts per category, never the values", async () => {
    const result = await run([
      "Hi, I'm Dana. Mail me at dana.whitfield@example.co.uk or call (415) 555-2671; my card is 4111 1111 1111 1111.",
    ]);
    expect(result.verdict).toBe(false);
    expect(result.data).toEqual({ counts: { EMAIL_ADDRESS: 1, PHONE_NUMBER: 1, CREDIT_CARD: 1 } });
    expect(result.explanation).toBe("Found PII: EMAIL_ADDRESS (1), PHONE_NUMBER (1), CREDIT_CARD (1).");
    expect(JSON.stringify(result)).not.toMatch(/dana\.whitfield|555-2671|4111/);
    expect(result.transformedParts).toBeUndefined();
  });

  it("passes ordinary text full of numbers that are not PII", async () => {
    const text = [
      "Order #1234567890 shipped on 2024-01-15 (ref 20240115-0042) for $1,299.99 incl. 8.25% tax.",
      "We upgraded from version 10.2.3.4 to v11.0.1.2; python-3.12.1.0 and node 24.21.0 are fine.",
      "Meeting at 14:30:00 UTC, 2024-03-05T09:15:00Z; build 1700000000000 took 3.14159 s.",
      "Invoice 98765432101234 (14 digits), tracking 1Z999AA10123456784, SKU 555-1234, zip 94103-1234.",
      "The ratio is 1:2:3, see std::vector and A::B in C++, and the hash 9f86d081884c7d659a2feaa0c55ad015.",
      "Call it sk-learn-style or sk-this-is-just-a-long-hyphenated-phrase, and email@ nothing.",
    ].join("\n");
    const result = await run([text]);
    expect(result).toEqual({ verdict: true, explanation: "No PII was found.", data: { counts: {} } });
  });

  it("redacts every finding across all parts, earlier messages too", async () => {
    const parts = [
      "My email is sam@example.com and my SSN is 123-45-6789.",
      "You said you could help.",
      "Wire it to DE89 3704 0044 0532 0130 00 from 10.0.12.7, thanks.",
    ];
    const result = await run(parts, { redact: true });
    expect(result.verdict).toBe(true);
    expect(result.transformedParts).toEqual([
      "My email is [EMAIL_ADDRESS] and my SSN is [US_SSN].",
      "You said you could help.",
      "Wire it to [IBAN] from [IP_ADDRESS], thanks.",
    ]);
    expect(result.data).toEqual({
      counts: { EMAIL_ADDRESS: 1, US_SSN: 1, IBAN: 1, IP_ADDRESS: 1 },
      redacted: true,
    });
    expect(result.explanation).toBe("Redacted PII: EMAIL_ADDRESS (1), IBAN (1), US_SSN (1), IP_ADDRESS (1).");
  });

  it("only looks for the categories asked for, with Portkey's SSN as US_SSN", async () => {
    const text = "sam@example.com, 123-45-6789, +44 20 7946 0958";
    expect(await redacted(text, { categories: ["SSN"] })).toBe("sam@example.com, [US_SSN], +44 20 7946 0958");
    expect(await redacted(text, { categories: ["PHONE_NUMBER", "EMAIL_ADDRESS"] })).toBe(
      "[EMAIL_ADDRESS], 123-45-6789, [PHONE_NUMBER]",
    );
  });

  describe("EMAIL_ADDRESS", () => {
    it("takes the address without the punctuation around it", async () => {
      expect(await redacted("Write to <first.last+tag@mail.example.org>. Or x_y%z@sub-domain.example.io.")).toBe(
        "Write to <[EMAIL_ADDRESS]>. Or [EMAIL_ADDRESS].",
      );
    });

    it("leaves handles and addresses without a real domain", async () => {
      const text = "Ping @alice, user@localhost, a@b.c, me@-bad-.com and name@domain";
      expect(await redacted(text)).toBe(text);
    });
  });

  describe("PHONE_NUMBER", () => {
    it("finds national numbers of the default country and international ones of any", async () => {
      expect(await redacted("Call 415.555.2671, 1-800-555-0199, +44 20 7946 0958 or +91 98765 43210.")).toBe(
        "Call [PHONE_NUMBER], [PHONE_NUMBER], [PHONE_NUMBER] or [PHONE_NUMBER].",
      );
    });

    it("reads national numbers as the defaultCountry's", async () => {
      const text = "Ring 020 7946 0958 in London.";
      expect(await redacted(text)).toBe(text);
      expect(await redacted(text, { defaultCountry: "gb" })).toBe("Ring [PHONE_NUMBER] in London.");
    });

    it("refuses a country libphonenumber does not know", async () => {
      expect(await checkSpecProblem({ id: "default.pii", parameters: { defaultCountry: "XX" } })).toEqual({
        path: "parameters",
        message: "defaultCountry 'XX' is not a known country",
      });
      expect(await checkSpecProblem({ id: "default.pii", parameters: { defaultCountry: "USA" } })).toEqual({
        path: "parameters.defaultCountry",
        message: "expected a two-letter country code such as US",
      });
    });
  });

  describe("CREDIT_CARD", () => {
    it("finds Luhn-valid numbers of card networks, grouped or not", async () => {
      const text =
        "Visa 4111-1111-1111-1111, Amex 3782 822463 10005, MC 5555555555554444, Discover 6011 1111 1111 1117.";
      expect(await redacted(text, { categories: ["CREDIT_CARD"] })).toBe(
        "Visa [CREDIT_CARD], Amex [CREDIT_CARD], MC [CREDIT_CARD], Discover [CREDIT_CARD].",
      );
    });

    it("leaves numbers that fail Luhn, have no network or are part of a longer number", async () => {
      // 4111...1112 fails Luhn; 1234 5678 9012 3452 passes it but no network starts with 1;
      // the third is a Luhn-valid Visa number inside a 20-digit one.
      const text = "4111 1111 1111 1112, 1234 5678 9012 3452, 4111 1111 1111 1111 0";
      expect(await redacted(text, { categories: ["CREDIT_CARD"] })).toBe(text);
    });
  });

  describe("IBAN", () => {
    it("finds IBANs with a valid checksum and their country's length", async () => {
      const text = "GB82 WEST 1234 5698 7654 32 or FR1420041010050500013M02606 or NL91ABNA0417164300.";
      expect(await redacted(text, { categories: ["IBAN"] })).toBe("[IBAN] or [IBAN] or [IBAN].");
    });

    it("leaves a wrong checksum, a wrong length and an unknown country", async () => {
      const text = "GB82 WEST 1234 5698 7654 33, GB82 WEST 1234 5698 7654, ZZ82WEST12345698765432";
      expect(await redacted(text, { categories: ["IBAN"] })).toBe(text);
    });
  });

  describe("US_SSN", () => {
    it("finds numbers that could be issued and leaves those that cannot", async () => {
      const text =
        "SSNs 078-05-1121 and 123 45 6789; not 000-12-3456, 666-12-3456, 900-12-3456, 123-00-4567, 123-45-0000.";
      expect(await redacted(text, { categories: ["US_SSN"] })).toBe(
        "SSNs [US_SSN] and [US_SSN]; not 000-12-3456, 666-12-3456, 900-12-3456, 123-00-4567, 123-45-0000.",
      );
    });
  });

  describe("IP_ADDRESS", () => {
    it("finds IPv4 and IPv6 addresses node accepts", async () => {
      const text = "From 192.168.1.10 and 2001:db8::8a2e:370:7334, then fe80::1 and ::ffff:192.0.2.1; not 256.1.1.1.";
      expect(await redacted(text, { categories: ["IP_ADDRESS"] })).toBe(
        "From [IP_ADDRESS] and [IP_ADDRESS], then [IP_ADDRESS] and [IP_ADDRESS]; not 256.1.1.1.",
      );
    });
  });

  describe("SECRET", () => {
    const secrets = {
      openai: "sk-abcdefghijklmnopqrstuvwxyzABCDEF0123456789abcdef",
      openaiProject: `sk-proj-${"Ab3_".repeat(30)}xyZ9`,
      anthropic: `sk-ant-api03-${"q1W2e3R4t5".repeat(9)}-AAAAAA`,
      awsId: "AKIAIOSFODNN7EXAMPLE",
      awsSession: "ASIAY34FZKBOKMUTVV7A",
      github: `ghp_${"a1B2c3D4e5".repeat(3)}F6g7H8`,
      githubFineGrained: `github_pat_11ABCDEFG0${"abcdEFGH12".repeat(8)}`,
      slack: "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
      google: "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
      stripe: "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
      jwt:
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ" +
        ".SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    };

    for (const [kind, secret] of Object.entries(secrets)) {
      it(`hides a ${kind} key`, async () => {
        expect(await redacted(`export TOKEN="${secret}"; curl -H 'Authorization: Bearer ${secret}'.`)).toBe(
          `export TOKEN="[SECRET]"; curl -H 'Authorization: Bearer [SECRET]'.`,
        );
      });
    }

    it("hides a PEM private key block whole, and a cut-short one up to its last base64 line", async () => {
      const body = ["MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7VJTUt9Us8cKj", "MIIEvQIBADANBgkqhkiG9w0BAQEF"];
      const whole = `-----BEGIN RSA PRIVATE KEY-----\n${body.join("\n")}\n-----END RSA PRIVATE KEY-----`;
      expect(await redacted(`Here:\n${whole}\nWhy does it fail?`)).toBe("Here:\n[SECRET]\nWhy does it fail?");
      const cut = `-----BEGIN PRIVATE KEY-----\n${body.join("\n")}\nwhy does it fail?`;
      expect(await redacted(cut)).toBe("[SECRET]\nwhy does it fail?");
    });

    it("takes a key over the digits inside it", async () => {
      const result = await run([`key sk-proj-4155552671${"x".repeat(30)}`]);
      expect(result.data).toEqual({ counts: { SECRET: 1 } });
    });
  });

  it("scans a 1 MB text in reasonable time", async () => {
    const paragraph =
      "Order 99887766 on 2024-05-06 cost $12.50; version 1.2.3 shipped. Contact ops@example.com or 415-555-2671 " +
      "from 10.1.2.3, ref 4111 1111 1111 1111 and aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@@@@ 1234567890123. ";
    const text = paragraph.repeat(Math.ceil(1_000_000 / paragraph.length));
    const started = performance.now();
    const result = await run([text]);
    const elapsed = performance.now() - started;
    const copies = Math.ceil(1_000_000 / paragraph.length);
    expect(result.data).toEqual({
      counts: { EMAIL_ADDRESS: copies, PHONE_NUMBER: copies, CREDIT_CARD: copies, IP_ADDRESS: copies },
    });
    // About 2 s on a busy laptop-class core; a quadratic pattern would take minutes.
    expect(elapsed).toBeLessThan(10_000);
  });

  it("stays linear on hostile texts", async () => {
    for (const text of [
      "a".repeat(1_000_000),
      "sk-".repeat(300_000),
      "1".repeat(1_000_000),
      "a@".repeat(500_000),
      ":a".repeat(500_000),
      "eyJ".repeat(300_000),
      "-----BEGIN PRIVATE KEY-----".repeat(30_000),
    ]) {
      const started = performance.now();
      await run([text]);
      expect(performance.now() - started, text.slice(0, 12)).toBeLessThan(3_000);
    }
  });

  it("keeps the event loop turning on texts of digit groups, and stops when aborted", async () => {
    // libphonenumber spends about 0.3 ms on each 40 characters of these: some 10 s for the megabyte.
    const input = chatInput(["11 22 33 ".repeat(120_000)]);
    input.signal = AbortSignal.timeout(1_000);
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      longestGap = Math.max(longestGap, performance.now() - last);
      last = performance.now();
    }, 1);
    const started = performance.now();
    try {
      await expect(pii.run(input, { redact: false, defaultCountry: "US" })).rejects.toThrow(/timeout|abort/i);
    } finally {
      clearInterval(ticker);
    }
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(longestGap).toBeLessThan(250);
  });
});
