import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  maskCheckSecrets,
  maskGuardrailListSecrets,
  openCheckSecrets,
  openGuardrailListSecrets,
  restoreCheckSecrets,
  restoreGuardrailListSecrets,
  sealCheckSecrets,
  sealGuardrailListSecrets,
} from "../../../core/control/guardrails/secrets.ts";
import type { CheckSpec } from "../../../core/inference/guardrails/types.ts";
import { AesGcmSecrets } from "../../../core/store/aes-gcm.ts";

/**
 * Secret check parameters: how they are sealed and opened, what views show, and what a masked value sent back
 * restores; for a saved guardrail's checks and for the guardrail lists of a config.
 */

const secrets = new AesGcmSecrets(randomBytes(32));

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

  it("keeps a `__proto__` key of parsed JSON as a plain key, its secrets masked", () => {
    const checks = JSON.parse('[{"id": "x.y", "parameters": {"__proto__": {"token": "tok-0123456789abcdef"}}}]');
    expect(JSON.stringify(maskCheckSecrets(checks))).toBe(
      '[{"id":"x.y","parameters":{"__proto__":{"token":"to********cdef"}}}]',
    );
  });

  it("leaves a masked-looking value alone where no secret lives", () => {
    const checks: CheckSpec[] = [{ id: "default.regexMatch", parameters: { rule: "a********b" } }];
    expect(restoreCheckSecrets(checks)).toEqual(checks);
  });
});

describe("sealCheckSecrets and openCheckSecrets", () => {
  it("seal every secret and nothing else; opening gives the checks back; views show the same hints", async () => {
    const sealed = await sealCheckSecrets(secrets, stored);
    const text = JSON.stringify(sealed);
    for (const secret of ["whk-live-0123456789abcdef", "application/json", "sk-vendor-9876543210", '"c1"'])
      expect(text).not.toContain(secret);
    expect(sealed[0]!.parameters).toEqual({
      webhookURL: "https://hooks.example.com/guard",
      headers: {
        Authorization: { $sealed: expect.stringMatching(/^v1:/), hint: "Be********cdef" },
        "Content-Type": { $sealed: expect.any(String), hint: "ap********json" },
      },
      timeout: 3000,
    });
    expect(sealed[1]!.parameters).toMatchObject({ password: null, threshold: 0.5 });
    expect((sealed[1]!.parameters.providers as unknown[])[0]).toMatchObject({
      name: "primary",
      credentials: { $sealed: expect.any(String), hint: "********" },
    });
    expect(maskCheckSecrets(sealed)).toEqual(maskCheckSecrets(stored));
    expect(await openCheckSecrets(secrets, sealed)).toEqual(stored);
  });

  it("open legacy plaintext as it is, and fail on a value sealed under another key", async () => {
    expect(await openCheckSecrets(secrets, stored)).toEqual(stored);
    const foreign = await sealCheckSecrets(new AesGcmSecrets(randomBytes(32)), stored);
    await expect(openCheckSecrets(secrets, foreign)).rejects.toThrow(/decrypt/);
  });

  it("seal a sealed-looking value sent by a client as data: it opens to what was sent", async () => {
    const forged = { $sealed: "v1:AAAA:BBBB:CCCC", hint: "looks sealed" };
    const checks: CheckSpec[] = [{ id: "default.webhook", parameters: { headers: { "X-Key": forged } } }];
    const sealed = await sealCheckSecrets(secrets, checks);
    expect((sealed[0]!.parameters.headers as Record<string, unknown>)["X-Key"]).not.toEqual(forged);
    expect(await openCheckSecrets(secrets, sealed)).toEqual(checks);
  });

  it("take a `headers` parameter written as JSON text as one secret", async () => {
    const headers = JSON.stringify({ Authorization: "Bearer whk-live-0123456789abcdef" });
    const checks: CheckSpec[] = [{ id: "default.webhook", parameters: { webhookURL: "https://x.example", headers } }];
    expect(maskCheckSecrets(checks)[0]!.parameters.headers).toBe('{"********ef"}');
    const sealed = await sealCheckSecrets(secrets, checks);
    expect(JSON.stringify(sealed)).not.toContain("whk-live");
    expect(maskCheckSecrets(sealed)).toEqual(maskCheckSecrets(checks));
    expect(await openCheckSecrets(secrets, sealed)).toEqual(checks);
  });

  it("restore a masked value from sealed checks too (the stored value is kept as it is)", async () => {
    const sealed = await sealCheckSecrets(secrets, stored);
    const restored = restoreCheckSecrets(maskCheckSecrets(sealed), sealed);
    expect(restored).toEqual(sealed);
  });
});

describe("guardrail lists of a config", () => {
  const TOKEN = "Bearer cfg-hook-5f3a9b1c7d";
  // A shorthand entry (check id as key, here one named like a credential), a hook entry, a saved guardrail's slug.
  const list = [
    { "acme.apiToken": { endpoint: "https://x.example", api_key: "sk-acme-0a1b2c3d4e" }, deny: true },
    {
      type: "guardrail",
      id: "hooked",
      checks: [
        { id: "default.webhook", parameters: { webhookURL: "https://x.example", headers: { "X-Auth": TOKEN } } },
      ],
    },
    "saved-guardrail",
  ];

  it("mask, seal and open the check parameters only, never an entry's own keys", async () => {
    const masked = maskGuardrailListSecrets(list) as any[];
    expect(masked[0]).toEqual({
      "acme.apiToken": { endpoint: "https://x.example", api_key: "sk********3d4e" },
      deny: true,
    });
    expect(masked[1].checks[0].parameters.headers).toEqual({ "X-Auth": "Be********1c7d" });
    expect(masked[2]).toBe("saved-guardrail");

    const sealed = await sealGuardrailListSecrets(secrets, list);
    expect(JSON.stringify(sealed)).not.toContain("sk-acme-0a1b2c3d4e");
    expect(JSON.stringify(sealed)).not.toContain(TOKEN);
    expect(maskGuardrailListSecrets(sealed)).toEqual(masked);
    expect(await openGuardrailListSecrets(secrets, sealed)).toEqual(list);
    // Not a list (a config the compiler will refuse): left for it.
    expect(await sealGuardrailListSecrets(secrets, { not: "a list" })).toEqual({ not: "a list" });
  });

  it("restore a masked secret from the same place of the stored list, naming the place otherwise", async () => {
    const sealed = await sealGuardrailListSecrets(secrets, list);
    const masked = maskGuardrailListSecrets(list);
    expect(restoreGuardrailListSecrets(masked, sealed, "config.input_guardrails")).toEqual(sealed);
    expect(restoreGuardrailListSecrets(masked, list, "config.input_guardrails")).toEqual(list);
    expect(() =>
      restoreGuardrailListSecrets([...(masked as unknown[])].reverse(), list, "config.input_guardrails"),
    ).toThrow(
      expect.objectContaining({ code: "masked_secret", param: "config.input_guardrails[2].acme.apiToken.api_key" }),
    );
    expect(() => restoreGuardrailListSecrets(masked, undefined, "config.targets[0].before_request_hooks")).toThrow(
      expect.objectContaining({ param: "config.targets[0].before_request_hooks[0].acme.apiToken.api_key" }),
    );
  });
});
