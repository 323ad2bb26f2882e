import { describe, expect, it } from "vitest";
import { maskCheckSecrets, restoreCheckSecrets } from "../../../core/control/guardrail-secrets.ts";
import type { CheckSpec } from "../../../core/guardrails/types.ts";

/** Secret check parameters: what views show, and what a masked value sent back restores. */

const stored: CheckSpec[] = [
  {
    id: "default.webhook",
    parameters: {
      webhookURL: "https://hooks.example.com/guard",
      headers: { Authorization: "Bearer whk-live-0123456789abcdef", "Content-Type": "application/json" },
      timeout: 3000,
    },
  },
  {
    id: "vendor.moderation",
    parameters: {
      providers: [{ name: "primary", credentials: { clientId: "c1" }, apiKey: "sk-vendor-9876543210" }],
      password: null,
      threshold: 0.5,
    },
  },
];

describe("maskCheckSecrets", () => {
  it("masks credential-named fields at any depth and every header value, and nothing else", () => {
    expect(maskCheckSecrets(stored)).toEqual([
      {
        id: "default.webhook",
        parameters: {
          webhookURL: "https://hooks.example.com/guard",
          headers: { Authorization: "Be********cdef", "Content-Type": "ap********json" },
          timeout: 3000,
        },
      },
      {
        id: "vendor.moderation",
        parameters: {
          // A non-string secret shows no hint at all; a null one stays null.
          providers: [{ name: "primary", credentials: "********", apiKey: "sk********3210" }],
          password: null,
          threshold: 0.5,
        },
      },
    ]);
    // The stored checks are not changed.
    expect((stored[0]!.parameters.headers as Record<string, string>).Authorization).toContain("0123456789abcdef");
  });
});

describe("restoreCheckSecrets", () => {
  it("restores what was masked, at the same place of the same check", () => {
    const sentBack = maskCheckSecrets(stored);
    expect(restoreCheckSecrets(sentBack, stored)).toEqual(stored);
  });

  it("keeps new values as sent, and refuses a mask that no stored value stands behind", () => {
    const changed = maskCheckSecrets(stored);
    (changed[0]!.parameters.headers as Record<string, string>).Authorization = "Bearer a-new-token-value";
    expect(restoreCheckSecrets(changed, stored)[0]!.parameters.headers).toEqual({
      Authorization: "Bearer a-new-token-value",
      "Content-Type": "application/json",
    });

    const swapped = maskCheckSecrets(stored).reverse();
    expect(() => restoreCheckSecrets(swapped, stored)).toThrow(
      expect.objectContaining({ param: "checks[0].parameters.providers[0].credentials", code: "masked_secret" }),
    );
    const otherMask = maskCheckSecrets(stored);
    (otherMask[0]!.parameters.headers as Record<string, string>).Authorization = "Xy********zzzz";
    expect(() => restoreCheckSecrets(otherMask, stored)).toThrow(
      expect.objectContaining({ param: "checks[0].parameters.headers.Authorization" }),
    );
    expect(() => restoreCheckSecrets(maskCheckSecrets(stored))).toThrow(expect.objectContaining({ kind: "invalid" }));
  });

  it("leaves a masked-looking value alone where no secret lives", () => {
    const checks: CheckSpec[] = [{ id: "default.regexMatch", parameters: { rule: "a********b" } }];
    expect(restoreCheckSecrets(checks)).toEqual(checks);
  });
});
