import { beforeAll, describe, expect, it } from "vitest";
import { loadRegexEngine } from "../../../../core/inference/routing/query.ts";

// Configs with $regex are compiled once the regex engine is loaded (callers await it; see routing/source.ts).
beforeAll(() => loadRegexEngine());
import { HttpError } from "../../../../core/http/errors.ts";
import {
  type ConfigNode,
  type LeafNode,
  type StrategyNode,
  compileConfig,
} from "../../../../core/inference/routing/config.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/** A conditional rule `{query, then}`. */
// biome-ignore lint/suspicious/noThenProperty: `then` is the config format's name for the chosen target.
const when = (query: unknown, target: string) => ({ query, then: target });

const trusted = parseTrustedHosts([]);
const compile = (raw: unknown) => compileConfig(raw, trusted);

/** The 400 a config raises: its param (the path) and message. */
function rejection(raw: unknown): { param: string | null; message: string } {
  try {
    compile(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    expect((error as HttpError).status).toBe(400);
    return { param: (error as HttpError).param, message: (error as HttpError).message };
  }
  throw new Error("config was accepted");
}

const leaf = (extra: Record<string, unknown> = {}) => ({ provider: "openai", ...extra });
const many = (count: number, make: (index: number) => unknown = () => leaf()) =>
  Array.from({ length: count }, (_, index) => make(index));

describe("config schema: every error names the offending path", () => {
  it.each([
    ["not an object", [], "x-gateway-config"],
    ["unknown mode", { strategy: { mode: "random" }, targets: [leaf()] }, "x-gateway-config.strategy.mode"],
    [
      "unknown strategy key",
      { strategy: { mode: "fallback", onn_status_codes: [] }, targets: [leaf()] },
      "x-gateway-config.strategy",
    ],
    [
      "bad status code",
      { strategy: { mode: "fallback", on_status_codes: [42] }, targets: [leaf()] },
      "x-gateway-config.strategy.on_status_codes[0]",
    ],
    ["targets without strategy", { targets: [leaf()] }, "x-gateway-config.strategy"],
    ["empty targets", { strategy: { mode: "fallback" }, targets: [] }, "x-gateway-config.targets"],
    [
      "a target without provider",
      { strategy: { mode: "fallback" }, targets: [leaf(), { api_key: "k" }] },
      "x-gateway-config.targets[1].provider",
    ],
    [
      "unknown provider",
      { strategy: { mode: "fallback" }, targets: [leaf({ provider: "nope" })] },
      "x-gateway-config.targets[0].provider",
    ],
    [
      "provider and targets",
      { provider: "openai", strategy: { mode: "fallback" }, targets: [leaf()] },
      "x-gateway-config.provider",
    ],
    ["retry attempts above 5", { ...leaf(), retry: { attempts: 6 } }, "x-gateway-config.retry.attempts"],
    ["retry unknown key", { ...leaf(), retry: { attempts: 1, tries: 2 } }, "x-gateway-config.retry"],
    [
      "nested retry",
      {
        strategy: { mode: "fallback" },
        targets: [{ strategy: { mode: "single" }, targets: [leaf({ retry: { attempts: -1 } })] }],
      },
      "x-gateway-config.targets[0].targets[0].retry.attempts",
    ],
    [
      "negative weight",
      { strategy: { mode: "loadbalance" }, targets: [leaf({ weight: -1 })] },
      "x-gateway-config.targets[0].weight",
    ],
    [
      "all weights 0",
      { strategy: { mode: "loadbalance" }, targets: [leaf({ weight: 0 }), leaf({ weight: 0 })] },
      "x-gateway-config.targets",
    ],
    ["timeout not an integer", { ...leaf(), request_timeout: 1.5 }, "x-gateway-config.request_timeout"],
    ["override_params not an object", { ...leaf(), override_params: [1] }, "x-gateway-config.override_params"],
    ["drop_params not strings", { ...leaf(), drop_params: [1] }, "x-gateway-config.drop_params[0]"],
    ["cache mode", { ...leaf(), cache: { mode: "fuzzy" } }, "x-gateway-config.cache.mode"],
    [
      "private custom host",
      { strategy: { mode: "fallback" }, targets: [leaf({ custom_host: "http://192.168.1.1/v1" })] },
      "x-gateway-config.targets[0].custom_host",
    ],
    ["custom host scheme", { ...leaf(), custom_host: "gopher://example.com" }, "x-gateway-config.custom_host"],
    ["mode needing targets", { ...leaf(), strategy: { mode: "fallback" } }, "x-gateway-config.targets"],
    [
      "conditional without conditions",
      { strategy: { mode: "conditional" }, targets: [leaf({ name: "a" })] },
      "x-gateway-config.strategy.conditions",
    ],
    [
      "conditional unknown then",
      {
        strategy: { mode: "conditional", conditions: [when({ "metadata.a": "b" }, "x")] },
        targets: [leaf({ name: "a" })],
      },
      "x-gateway-config.strategy.conditions[0].then",
    ],
    [
      "conditional unknown default",
      {
        strategy: { mode: "conditional", conditions: [when({ "metadata.a": "b" }, "a")], default: "z" },
        targets: [leaf({ name: "a" })],
      },
      "x-gateway-config.strategy.default",
    ],
    [
      "duplicate names",
      {
        strategy: { mode: "conditional", conditions: [when({ "metadata.a": "b" }, "a")] },
        targets: [leaf({ name: "a" }), leaf({ name: "a" })],
      },
      "x-gateway-config.targets[1].name",
    ],
    [
      "bad operator",
      {
        strategy: { mode: "conditional", conditions: [when({ "params.model": { $like: "x" } }, "a")] },
        targets: [leaf({ name: "a" })],
      },
      "x-gateway-config.strategy.conditions[0].query.params.model.$like",
    ],
    [
      "bad field root",
      {
        strategy: { mode: "conditional", conditions: [when({ "body.model": "x" }, "a")] },
        targets: [leaf({ name: "a" })],
      },
      "x-gateway-config.strategy.conditions[0].query.body.model",
    ],
    ["provider name longer than 128 characters", { provider: "p".repeat(5_000) }, "x-gateway-config.provider"],
    ["request_timeout past 2^31-1 ms", leaf({ request_timeout: 2 ** 31 }), "x-gateway-config.request_timeout"],
    [
      "target name longer than 128 characters in a condition",
      {
        strategy: { mode: "conditional", conditions: [when({ "metadata.a": "b" }, "t".repeat(200))] },
        targets: [leaf({ name: "a" })],
      },
      "x-gateway-config.strategy.conditions[0].then",
    ],
    [
      "bad regex",
      {
        strategy: { mode: "conditional", conditions: [when({ "params.model": { $regex: "(" } }, "a")] },
        targets: [leaf({ name: "a" })],
      },
      "x-gateway-config.strategy.conditions[0].query.params.model.$regex",
    ],
  ])("%s", (_name, raw, param) => {
    const { param: got, message } = rejection(raw);
    expect(got).toBe(param);
    expect(message).toContain(`'${param}'`);
  });
});

describe("config limits (spec 8)", () => {
  it("allows 100 root targets (1,000 for conditional) and 50 nested per root target", () => {
    expect(() => compile({ strategy: { mode: "fallback" }, targets: many(100) })).not.toThrow();
    expect(rejection({ strategy: { mode: "fallback" }, targets: many(101) }).param).toBe("x-gateway-config.targets");
    const conditional = (count: number) => ({
      strategy: { mode: "conditional", conditions: [when({ "metadata.a": "b" }, "t0")], default: "t0" },
      targets: many(count, (index) => leaf({ name: `t${index}` })),
    });
    expect(() => compile(conditional(1000))).not.toThrow();
    expect(rejection(conditional(1001)).param).toBe("x-gateway-config.targets");
    const nested = (count: number) => ({
      strategy: { mode: "fallback" },
      targets: [leaf(), { strategy: { mode: "loadbalance" }, targets: many(count) }],
    });
    expect(() => compile(nested(50))).not.toThrow();
    expect(rejection(nested(51)).param).toBe("x-gateway-config.targets[1].targets");
  });
});

describe("compiled configs", () => {
  it("gives every node its path and inherits retry, cache, params, forward headers, custom host and timeout", () => {
    const root = compile({
      strategy: { mode: "fallback", on_status_codes: [429, 503] },
      retry: { attempts: 2 },
      request_timeout: 5000,
      cache: { mode: "simple", max_age: 60 },
      override_params: { temperature: 0.1, top_p: 1 },
      default_params: { max_tokens: 10 },
      drop_params: ["user"],
      forward_headers: ["x-a"],
      custom_host: "https://llm.example.com/v1/",
      targets: [
        leaf({ api_key: "Bearer sk-1" }),
        {
          strategy: { mode: "loadbalance" },
          override_params: { temperature: 0.9 },
          drop_params: ["seed"],
          forward_headers: ["x-b"],
          retry: { attempts: 1, on_status_codes: [500], use_retry_after_header: true },
          targets: [
            leaf({ weight: 3, request_timeout: 100, custom_host: "https://other.example.com" }),
            leaf({ weight: 0 }),
          ],
        },
      ],
    }) as StrategyNode;
    expect(root.path).toBe("config");
    expect([...root.onStatusCodes!]).toEqual([429, 503]);
    const first = root.targets[0] as LeafNode;
    expect(first).toMatchObject({
      kind: "leaf",
      path: "config.targets[0]",
      provider: "openai",
      apiKey: "sk-1",
      weight: 1,
    });
    expect(first.settings).toEqual({
      retry: { attempts: 2, onStatusCodes: [429, 500, 502, 503, 504], useRetryAfterHeader: false },
      requestTimeoutMs: 5000,
      cache: { mode: "simple", maxAgeSeconds: 60, similarityThreshold: 0.95 },
      overrideParams: { temperature: 0.1, top_p: 1 },
      defaultParams: { max_tokens: 10 },
      dropParams: ["user"],
      forwardHeaders: ["x-a"],
      customHost: "https://llm.example.com/v1",
    });
    const nested = root.targets[1] as StrategyNode;
    const deep = nested.targets[0] as LeafNode;
    expect(deep.path).toBe("config.targets[1].targets[0]");
    expect(deep.weight).toBe(3);
    expect(deep.settings).toMatchObject({
      retry: { attempts: 1, onStatusCodes: [500], useRetryAfterHeader: true },
      requestTimeoutMs: 100,
      overrideParams: { temperature: 0.9, top_p: 1 },
      dropParams: ["user", "seed"],
      forwardHeaders: ["x-a", "x-b"],
      customHost: "https://other.example.com",
      cache: { mode: "simple" },
    });
    expect((nested.targets[1] as LeafNode).settings.requestTimeoutMs).toBe(5000);
  });

  it("accepts camelCase keys, @slug providers, virtual keys, cloud fields and unknown future fields", () => {
    const root = compile({
      strategy: { mode: "fallback", onStatusCodes: [500] },
      targets: [
        { provider: "@my-openai", overrideParams: { Model: "x" }, requestTimeout: 10 },
        { virtualKey: "vk-1", input_guardrails: ["g1"] },
        { provider: "bedrock", awsRegion: "eu-west-1", awsAccessKeyId: "AKIA", awsSecretAccessKey: "s" },
        { provider: "azure-openai", resourceName: "res", deploymentId: "dep", apiVersion: "2024-10-21" },
      ],
    }) as StrategyNode;
    expect([...root.onStatusCodes!]).toEqual([500]);
    const [slug, virtual, bedrock, azure] = root.targets as LeafNode[];
    expect(slug).toMatchObject({
      provider: "@my-openai",
      settings: { overrideParams: { Model: "x" }, requestTimeoutMs: 10 },
    });
    expect(virtual).toMatchObject({ virtualKey: "vk-1" });
    expect(bedrock!.aws).toEqual({
      region: "eu-west-1",
      accessKeyId: "AKIA",
      secretAccessKey: "s",
      sessionToken: undefined,
    });
    expect(azure!.azure).toMatchObject({ resourceName: "res", deploymentId: "dep", apiVersion: "2024-10-21" });
  });

  it("compiles a plain provider config to a single leaf at `config`", () => {
    const root: ConfigNode = compile({ provider: "OpenAI", api_key: "sk", strategy: { mode: "single" } });
    expect(root).toMatchObject({ kind: "leaf", path: "config", provider: "openai", apiKey: "sk" });
  });

  it("a root of settings only (cache, retry, timeout) routes to the provider the request headers name", () => {
    for (const raw of [
      { cache: { mode: "simple", max_age: 60 } },
      { retry: { attempts: 2 } },
      { request_timeout: 5000, override_params: { temperature: 0 } },
    ]) {
      expect(compile(raw)).toMatchObject({ kind: "leaf", path: "config", fromHeaders: true });
    }
    expect(compile({ retry: { attempts: 2 } }).settings.retry).toMatchObject({ attempts: 2 });
    // Target fields without a provider would be ignored: refused, as is an empty config.
    expect(rejection({ api_key: "sk", cache: { mode: "simple" } }).param).toBe("x-gateway-config.provider");
    expect(rejection({}).param).toBe("x-gateway-config.provider");
    // Nested targets still need a provider each.
    expect(rejection({ strategy: { mode: "fallback" }, targets: [{ cache: { mode: "simple" } }] }).param).toBe(
      "x-gateway-config.targets[0].provider",
    );
  });

  it("checks custom hosts against TRUSTED_CUSTOM_HOSTS", () => {
    const local = parseTrustedHosts(["127.0.0.1"]);
    expect(compileConfig({ provider: "openai", custom_host: "http://127.0.0.1:9000/v1" }, local)).toMatchObject({
      settings: { customHost: "http://127.0.0.1:9000/v1" },
    });
    expect(() => compileConfig({ provider: "openai", custom_host: "http://127.0.0.2/v1" }, local)).toThrow(
      /Custom host rejected/,
    );
  });
});

describe("native batch storage of a target", () => {
  it("carries the Bedrock bucket and role and the Vertex AI bucket to the leaf (camelCase accepted too)", () => {
    expect(
      compile({
        provider: "bedrock",
        aws_region: "us-east-1",
        aws_s3_bucket: "batches",
        aws_role_arn: "arn:aws:iam::1:role/b",
      }),
    ).toMatchObject({ aws: { region: "us-east-1", s3Bucket: "batches", roleArn: "arn:aws:iam::1:role/b" } });
    expect(compile({ provider: "vertex-ai", vertexProjectId: "p", vertexStorageBucket: "gcs-batches" })).toMatchObject({
      vertex: { projectId: "p", storageBucket: "gcs-batches" },
    });
    // Without a provider these describe nothing: refused like the other target fields.
    expect(() => compile({ vertex_storage_bucket: "b" })).toThrow();
  });
});
