import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  maskConfigSecrets,
  openConfigSecrets,
  restoreConfigSecrets,
  sealConfigSecrets,
} from "../../../core/control/configs/secrets.ts";
import { AesGcmSecrets } from "../../../core/store/aes-gcm.ts";

/**
 * Secrets of a saved config: provider credentials on every node, and the secret check parameters of the
 * guardrails written inline on any node (root or target), sealed, opened, masked and restored together.
 */

const secrets = new AesGcmSecrets(randomBytes(32));
const KEY = "sk-config-key-7a3e1b9d";
const TOKEN = "Bearer target-hook-2c6f0a8e4b";
const JUDGE_KEY = "sk-judge-key-5d9b3f1a";

const config = {
  strategy: { mode: "fallback" },
  input_guardrails: ["saved-guardrail"],
  targets: [
    {
      provider: "openai",
      api_key: KEY,
      output_guardrails: [
        {
          "default.webhook": { webhookURL: "https://hooks.example.com/g", headers: { Authorization: TOKEN } },
          deny: true,
        },
      ],
    },
    {
      provider: "anthropic",
      before_request_hooks: [
        {
          type: "guardrail",
          checks: [
            {
              id: "default.modelGraded",
              parameters: { config: { provider: "openai", api_key: JUDGE_KEY }, criteria: "no passwords" },
            },
          ],
        },
      ],
    },
  ],
};

const masked = {
  ...config,
  targets: [
    {
      ...config.targets[0],
      api_key: "sk********1b9d",
      output_guardrails: [
        {
          "default.webhook": {
            webhookURL: "https://hooks.example.com/g",
            headers: { Authorization: "Be********8e4b" },
          },
          deny: true,
        },
      ],
    },
    {
      provider: "anthropic",
      before_request_hooks: [
        {
          type: "guardrail",
          checks: [
            {
              id: "default.modelGraded",
              parameters: { config: { provider: "openai", api_key: "sk********3f1a" }, criteria: "no passwords" },
            },
          ],
        },
      ],
    },
  ],
};

describe("config secrets", () => {
  it("seal provider credentials and inline guardrails' secrets on every node; views show hints; opening restores all", async () => {
    const sealed = await sealConfigSecrets(secrets, config);
    for (const secret of [KEY, TOKEN, JUDGE_KEY]) expect(JSON.stringify(sealed)).not.toContain(secret);
    expect(sealed.input_guardrails).toEqual(["saved-guardrail"]);
    expect(maskConfigSecrets(sealed)).toEqual(masked);
    expect(maskConfigSecrets(config)).toEqual(masked);
    expect(await openConfigSecrets(secrets, sealed)).toEqual(config);
    expect(await openConfigSecrets(secrets, config)).toEqual(config);
  });

  it("restore what GET showed from the stored config, opened", async () => {
    const previous = await openConfigSecrets(secrets, await sealConfigSecrets(secrets, config));
    expect(await restoreConfigSecrets(masked, previous)).toEqual(config);
  });

  it("refuse a masked guardrail secret with nothing behind it, naming its place; a masked credential is kept as sent", async () => {
    await expect(restoreConfigSecrets(masked)).rejects.toMatchObject({
      code: "masked_secret",
      param: "config.targets[0].output_guardrails[0].default.webhook.headers.Authorization",
    });
    const onlyCredential = { provider: "openai", api_key: "sk********1b9d" };
    expect(await restoreConfigSecrets(onlyCredential)).toEqual(onlyCredential);
  });

  it("seal a sealed-looking value a client sent as data", async () => {
    const forged = { provider: "openai", api_key: { $sealed: "v1:AAAA:BBBB:CCCC", hint: "x" } };
    const sealed = await sealConfigSecrets(secrets, forged);
    expect(sealed.api_key).not.toEqual(forged.api_key);
    expect(await openConfigSecrets(secrets, sealed)).toEqual(forged);
  });
});
