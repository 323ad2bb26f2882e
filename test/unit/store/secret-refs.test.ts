import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AwsSecretResolver } from "../../../core/platform/aws/aws-secret-refs.ts";
import { LocalSecretResolver } from "../../../core/platform/local/local-secret-refs.ts";
import {
  CachingSecretResolver,
  type SecretRef,
  SecretRefError,
  type SecretResolver,
  parseSecretRef,
} from "../../../core/store/secret-refs.ts";
import { type AwsSecretsMock, startAwsSecretsMock } from "../../mocks/aws-secrets.ts";

const reason = (promise: Promise<unknown>) =>
  promise.then(
    () => "resolved",
    (error: unknown) => (error instanceof SecretRefError ? error.reason : String(error)),
  );

describe("parseSecretRef", () => {
  it("reads the four kinds and leaves plain values alone", () => {
    expect(parseSecretRef("sk-plain-key")).toBeUndefined();
    expect(parseSecretRef("secretsmanager:gateway/openai")).toEqual({ scheme: "secretsmanager", id: "gateway/openai" });
    expect(parseSecretRef("secretsmanager:arn:aws:secretsmanager:us-east-1:1:secret:gw/x-AbC#api_key")).toEqual({
      scheme: "secretsmanager",
      id: "arn:aws:secretsmanager:us-east-1:1:secret:gw/x-AbC",
      jsonKey: "api_key",
    });
    expect(parseSecretRef("ssm:/gateway/openai")).toEqual({ scheme: "ssm", name: "/gateway/openai" });
    expect(parseSecretRef("env:OPENAI_KEY")).toEqual({ scheme: "env", name: "OPENAI_KEY" });
    expect(parseSecretRef("file:keys/openai.txt")).toEqual({ scheme: "file", path: "keys/openai.txt" });
  });

  it("refuses malformed references instead of sending them upstream as keys", () => {
    for (const bad of [
      "env:",
      "env:1BAD",
      "env:A-B",
      "file:../etc/passwd",
      "file:a/../../b",
      "ssm:a b",
      "secretsmanager:#k",
      "secretsmanager:x#",
    ]) {
      expect(() => parseSecretRef(bad), bad).toThrow(SecretRefError);
    }
  });
});

describe("CachingSecretResolver", () => {
  it("keeps a value for its time to live, shares concurrent lookups and forgets failures", async () => {
    let now = 0;
    let calls = 0;
    let fail = true;
    const inner: SecretResolver = {
      admit() {},
      async resolve() {
        calls++;
        if (fail) throw new SecretRefError("not_found", "missing");
        return `value-${calls}`;
      },
    };
    const cache = new CachingSecretResolver(inner, 60_000, () => now);
    const ref: SecretRef = { scheme: "env", name: "X" };
    expect(await reason(cache.resolve(ref))).toBe("not_found");
    fail = false;
    const [a, b] = await Promise.all([cache.resolve(ref), cache.resolve(ref)]);
    expect([a, b, calls]).toEqual(["value-2", "value-2", 2]);
    now = 59_999;
    expect(await cache.resolve(ref)).toBe("value-2");
    now = 60_000;
    expect(await cache.resolve(ref)).toBe("value-3");
  });
});

describe("LocalSecretResolver", () => {
  let dir: string;
  let outside: string;
  beforeAll(() => {
    const base = mkdtempSync(join(tmpdir(), "secret-refs-"));
    dir = join(base, "secrets");
    outside = join(base, "outside.txt");
    mkdirSync(join(dir, "nested"), { recursive: true });
    writeFileSync(join(dir, "nested", "key.txt"), "sk-from-file\n");
    writeFileSync(outside, "sk-outside");
    symlinkSync(outside, join(dir, "escape.txt"));
  });
  afterAll(() => rmSync(join(dir, ".."), { recursive: true, force: true }));

  const env = { OPENAI_KEY: "sk-env", HOME: "/root", GATEWAY_MASTER_KEY: "m", AWS_SECRET_ACCESS_KEY: "a" };
  const resolver = (envPrefix = "OPENAI_") => new LocalSecretResolver({ env, envPrefix, filesDir: dir });

  it("reads env: variables only under the configured prefix, never the gateway's own settings or AWS credentials", async () => {
    expect(await resolver().resolve({ scheme: "env", name: "OPENAI_KEY" })).toBe("sk-env");
    expect(await reason(resolver().resolve({ scheme: "env", name: "OPENAI_MISSING" }))).toBe("not_found");
    expect(await reason(resolver().resolve({ scheme: "env", name: "HOME" }))).toBe("invalid");
    expect(() => resolver().admit({ scheme: "env", name: "HOME" })).toThrow(SecretRefError);
    expect(await reason(resolver("GATEWAY_").resolve({ scheme: "env", name: "GATEWAY_MASTER_KEY" }))).toBe("invalid");
    expect(await reason(resolver("AWS_").resolve({ scheme: "env", name: "AWS_SECRET_ACCESS_KEY" }))).toBe("invalid");
    // No prefix configured: no env: reference at all, not even one naming a set variable.
    expect(await reason(resolver("").resolve({ scheme: "env", name: "OPENAI_KEY" }))).toBe("unsupported");
    expect(await reason(resolver("").resolve({ scheme: "env", name: "HOME" }))).toBe("unsupported");
  });

  it("reads file: references only inside the configured folder", async () => {
    expect(await resolver().resolve({ scheme: "file", path: "nested/key.txt" })).toBe("sk-from-file");
    expect(await resolver().resolve({ scheme: "file", path: join(dir, "nested", "key.txt") })).toBe("sk-from-file");
    expect(await reason(resolver().resolve({ scheme: "file", path: outside }))).toBe("invalid");
    expect(() => resolver().admit({ scheme: "file", path: outside })).toThrow(SecretRefError);
    expect(await reason(resolver().resolve({ scheme: "file", path: "escape.txt" }))).toBe("invalid");
    expect(await reason(resolver().resolve({ scheme: "file", path: "none.txt" }))).toBe("not_found");
    const noDir = new LocalSecretResolver({ env: {} });
    expect(await reason(noDir.resolve({ scheme: "file", path: "nested/key.txt" }))).toBe("unsupported");
    expect(await reason(noDir.resolve({ scheme: "ssm", name: "x" }))).toBe("unsupported");
  });
});

describe("AwsSecretResolver against a Secrets Manager / SSM mock", () => {
  let mock: AwsSecretsMock;
  let resolver: AwsSecretResolver;
  beforeAll(async () => {
    mock = await startAwsSecretsMock();
    mock.secrets.set("gateway/openai", "sk-from-secrets-manager");
    mock.secrets.set(
      "gateway/bundle",
      JSON.stringify({ api_key: "sk-json-field", account: { type: "service_account" } }),
    );
    mock.secrets.set("other/openai", "sk-outside-prefix");
    mock.parameters.set("/gateway/anthropic", "sk-from-ssm");
    const { SecretsManagerClient } = await import("@aws-sdk/client-secrets-manager");
    const { SSMClient } = await import("@aws-sdk/client-ssm");
    const common = {
      region: "us-east-1",
      endpoint: mock.url,
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
      maxAttempts: 1,
    };
    const secretsManager = new SecretsManagerClient(common);
    const ssm = new SSMClient(common);
    resolver = new AwsSecretResolver(
      { secretsManager: async () => secretsManager, ssm: async () => ssm },
      { prefix: "gateway/" },
    );
  });
  afterAll(async () => {
    await mock?.close();
  });

  it("resolves secrets by name and ARN, JSON keys, and decrypted SSM parameters", async () => {
    expect(await resolver.resolve({ scheme: "secretsmanager", id: "gateway/openai" })).toBe("sk-from-secrets-manager");
    expect(
      await resolver.resolve({
        scheme: "secretsmanager",
        id: "arn:aws:secretsmanager:us-east-1:123456789012:secret:gateway/openai-AbCdEf",
      }),
    ).toBe("sk-from-secrets-manager");
    expect(await resolver.resolve({ scheme: "secretsmanager", id: "gateway/bundle", jsonKey: "api_key" })).toBe(
      "sk-json-field",
    );
    expect(await resolver.resolve({ scheme: "secretsmanager", id: "gateway/bundle", jsonKey: "account" })).toBe(
      '{"type":"service_account"}',
    );
    expect(await resolver.resolve({ scheme: "ssm", name: "/gateway/anthropic" })).toBe("sk-from-ssm");
    const sent = mock.requests.at(-1)!;
    expect(sent.headers["x-amz-target"]).toBe("AmazonSSM.GetParameter");
    expect(sent.json()).toEqual({ Name: "/gateway/anthropic", WithDecryption: true });
  });

  it("answers not_found for missing secrets and keys, and refuses names outside the prefix without asking AWS", async () => {
    expect(await reason(resolver.resolve({ scheme: "secretsmanager", id: "gateway/none" }))).toBe("not_found");
    expect(await reason(resolver.resolve({ scheme: "ssm", name: "/gateway/none" }))).toBe("not_found");
    expect(await reason(resolver.resolve({ scheme: "secretsmanager", id: "gateway/bundle", jsonKey: "nope" }))).toBe(
      "not_found",
    );
    const before = mock.calls();
    expect(await reason(resolver.resolve({ scheme: "secretsmanager", id: "other/openai" }))).toBe("invalid");
    expect(await reason(resolver.resolve({ scheme: "env", name: "X" }))).toBe("unsupported");
    expect(
      await reason(resolver.resolve({ scheme: "secretsmanager", id: "arn:aws:secretsmanager:us-east-1:1:other" })),
    ).toBe("invalid");
    // Without a prefix nothing is admitted: the functions' role may read more than the gateway's secrets.
    const unscoped = new AwsSecretResolver({
      secretsManager: () => Promise.reject(new Error("not called")),
      ssm: () => Promise.reject(new Error("not called")),
    });
    expect(await reason(unscoped.resolve({ scheme: "secretsmanager", id: "gateway/openai" }))).toBe("unsupported");
    expect(await reason(unscoped.resolve({ scheme: "ssm", name: "/gateway/anthropic" }))).toBe("unsupported");
    expect(mock.calls()).toBe(before);
  });

  it("never puts the secret into its error messages", async () => {
    const error = await resolver
      .resolve({ scheme: "secretsmanager", id: "gateway/openai", jsonKey: "k" })
      .catch((e) => e);
    expect(error).toBeInstanceOf(SecretRefError);
    expect(String(error.message)).not.toContain("sk-from-secrets-manager");
  });
});
