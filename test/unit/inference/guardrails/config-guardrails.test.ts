import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ensureOrganisation } from "../../../../core/control/organisation/bootstrap.ts";
import * as configs from "../../../../core/control/configs/service.ts";
import {
  type GuardrailEntry,
  validateConfigGuardrails,
} from "../../../../core/inference/guardrails/config-guardrails.ts";
import { DEFAULT_CHECK_TIMEOUT_MS } from "../../../../core/inference/guardrails/types.ts";
import type { RequestContext, Services } from "../../../../core/services.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { parseGatewayHeaders } from "../../../../core/http/gateway-headers.ts";
import { LeafResolver } from "../../../../core/inference/gateway/plan.ts";
import { type LocalStores, createLocalStores } from "../../../../core/platform/local/local-stores.ts";
import {
  type ConfigNode,
  type LeafNode,
  type StrategyNode,
  compileConfig,
} from "../../../../core/inference/routing/config.ts";
import { resolveRouting } from "../../../../core/inference/routing/source.ts";
import { loadSettings } from "../../../../core/config/settings.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";
import { adminPrincipal, thrown, unique } from "../../../helpers/control-services.ts";

/**
 * Guardrails in routing configs: Portkey's shorthand and the older hooks compiled into entries with their
 * defaults, inheritance from parents to targets, 400s naming the path for bad structure (at compile time) and
 * for bad check parameters (validated once, when a config is saved or an inline request config compiled).
 */

const trusted = parseTrustedHosts([]);
const compile = (raw: unknown) => compileConfig(raw, trusted);

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

const inline = (entry: GuardrailEntry | undefined) => {
  if (!entry || !("inline" in entry)) throw new Error(`not an inline guardrail: ${JSON.stringify(entry)}`);
  return entry.inline;
};

const defaults = {
  deny: false,
  async: false,
  soft_deny_200: false,
  on_error: "open",
  timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
};

describe("Portkey's shorthand: input_guardrails / output_guardrails", () => {
  it("compiles references and inline guardrails, with default actions and ids derived from the path", () => {
    const root = compile({
      provider: "openai",
      input_guardrails: [
        "gr_saved123",
        "pii-policy",
        { "default.regexMatch": { rule: "\\d{16}", not: true }, deny: true, timeout_ms: 800 },
      ],
      output_guardrails: [{ id: "no-swearing", name: "No swearing", contains: { words: ["darn"], operator: "none" } }],
    });
    const { input, output } = root.settings.guardrails!;
    expect(input.slice(0, 2)).toEqual([
      { ref: "gr_saved123", path: "config.input_guardrails[0]" },
      { ref: "pii-policy", path: "config.input_guardrails[1]" },
    ]);
    expect(inline(input[2])).toEqual({
      id: "inline:config.input_guardrails[2]",
      checks: [{ id: "default.regexMatch", parameters: { rule: "\\d{16}", not: true } }],
      actions: { ...defaults, deny: true, timeout_ms: 800 },
    });
    // A check named without a namespace is a built-in one; the guardrail's own id and name are kept.
    expect(inline(output[0])).toEqual({
      id: "no-swearing",
      name: "No swearing",
      checks: [{ id: "default.contains", parameters: { words: ["darn"], operator: "none" } }],
      actions: defaults,
    });
    expect(output[0]!.path).toBe("config.output_guardrails[0]");
  });

  it("takes a check's own id and is_enabled out of its parameters, and keeps camelCase check ids and parameters", () => {
    const root = compile({
      provider: "openai",
      inputGuardrails: [
        {
          "default.regexMatch": { rule: "x", is_enabled: false },
          secondRule: { id: "default.regexMatch", rule: "y", matchCase: true },
          onFail: { feedback: { value: -5, weight: 0.5, metadata: "blocked" } },
          onSuccess: { feedback: { value: 5 } },
          async: true,
          on_error: "closed",
        },
      ],
    });
    expect(inline(root.settings.guardrails!.input[0])).toEqual({
      id: "inline:config.input_guardrails[0]",
      checks: [
        { id: "default.regexMatch", parameters: { rule: "x" }, is_enabled: false },
        { id: "default.regexMatch", parameters: { rule: "y", matchCase: true } },
      ],
      actions: {
        deny: false,
        async: true,
        soft_deny_200: false,
        on_error: "closed",
        timeout_ms: DEFAULT_CHECK_TIMEOUT_MS,
        on_fail: { feedback: { value: -5, weight: 0.5, metadata: "blocked" } },
        on_success: { feedback: { value: 5, weight: 1 } },
      },
    });
  });

  it("a reference object carries only the id", () => {
    expect(compile({ provider: "openai", input_guardrails: [{ id: "gr_abc" }] }).settings.guardrails!.input).toEqual([
      { ref: "gr_abc", path: "config.input_guardrails[0]" },
    ]);
    expect(rejection({ provider: "openai", input_guardrails: [{ id: "gr_abc", deny: true }] })).toMatchObject({
      param: "x-gateway-config.input_guardrails[0].deny",
      message: expect.stringContaining("carries only its id"),
    });
  });

  it.each([
    ["not an array", { input_guardrails: "gr_1" }, "x-gateway-config.input_guardrails"],
    ["a number", { input_guardrails: [42] }, "x-gateway-config.input_guardrails[0]"],
    ["a bad reference", { output_guardrails: ["has spaces in it"] }, "x-gateway-config.output_guardrails[0]"],
    ["no checks", { input_guardrails: [{ deny: true }] }, "x-gateway-config.input_guardrails[0]"],
    [
      "parameters that are not an object",
      { input_guardrails: [{ "default.contains": ["x"] }] },
      'x-gateway-config.input_guardrails[0]["default.contains"]',
    ],
    [
      "deny not boolean",
      { input_guardrails: [{ contains: {}, deny: "yes" }] },
      "x-gateway-config.input_guardrails[0].deny",
    ],
    [
      "on_error",
      { input_guardrails: [{ contains: {}, on_error: "ignore" }] },
      "x-gateway-config.input_guardrails[0].on_error",
    ],
    [
      "timeout above the limit",
      { input_guardrails: [{ contains: {}, timeout_ms: 600_000 }] },
      "x-gateway-config.input_guardrails[0].timeout_ms",
    ],
    [
      "feedback value",
      { input_guardrails: [{ contains: {}, on_fail: { feedback: { value: 11 } } }] },
      "x-gateway-config.input_guardrails[0].on_fail.feedback.value",
    ],
    [
      "async and deny",
      { input_guardrails: [{ contains: {}, async: true, deny: true }] },
      "x-gateway-config.input_guardrails[0].async",
    ],
    [
      "a mutator",
      { input_guardrails: [{ contains: {}, type: "mutator" }] },
      "x-gateway-config.input_guardrails[0].type",
    ],
    ["too many", { input_guardrails: Array.from({ length: 17 }, () => "gr_x") }, "x-gateway-config.input_guardrails"],
  ])("answers 400 naming the path: %s", (_what, guardrails, param) => {
    expect(rejection({ provider: "openai", ...guardrails }).param).toBe(param);
  });

  it("names the path inside nested targets", () => {
    const raw = {
      strategy: { mode: "fallback" },
      targets: [{ provider: "openai" }, { provider: "groq", output_guardrails: [{ contains: {}, timeout_ms: 0 }] }],
    };
    expect(rejection(raw).param).toBe("x-gateway-config.targets[1].output_guardrails[0].timeout_ms");
  });
});

describe("the older before_request_hooks / after_request_hooks", () => {
  it("compiles checks, references by id alone, and runs a node's hooks before its guardrails", () => {
    const root = compile({
      provider: "openai",
      input_guardrails: ["gr_after"],
      before_request_hooks: [
        { type: "guardrail", id: "gr_saved" },
        {
          type: "guardrail",
          id: "my-hook",
          deny: true,
          checks: [{ id: "default.regexMatch", parameters: { rule: "a+" }, name: "As" }, { id: "wordCount" }],
        },
      ],
      after_request_hooks: [{ checks: [{ id: "default.regexMatch", parameters: { rule: "b" }, is_enabled: false }] }],
    });
    const { input, output } = root.settings.guardrails!;
    expect(input[0]).toEqual({ ref: "gr_saved", path: "config.before_request_hooks[0]" });
    expect(inline(input[1])).toEqual({
      id: "my-hook",
      checks: [
        { id: "default.regexMatch", parameters: { rule: "a+" }, name: "As" },
        { id: "default.wordCount", parameters: {} },
      ],
      actions: { ...defaults, deny: true },
    });
    expect(input[2]).toEqual({ ref: "gr_after", path: "config.input_guardrails[0]" });
    expect(inline(output[0])).toMatchObject({
      id: "inline:config.after_request_hooks[0]",
      checks: [{ id: "default.regexMatch", parameters: { rule: "b" }, is_enabled: false }],
    });
  });

  it.each([
    [
      "a hook without checks or id",
      { before_request_hooks: [{ type: "guardrail" }] },
      "x-gateway-config.before_request_hooks[0]",
    ],
    ["empty checks", { before_request_hooks: [{ checks: [] }] }, "x-gateway-config.before_request_hooks[0].checks"],
    [
      "a check without id",
      { after_request_hooks: [{ checks: [{ parameters: {} }] }] },
      "x-gateway-config.after_request_hooks[0].checks[0].id",
    ],
    [
      "unknown check field",
      { after_request_hooks: [{ checks: [{ id: "default.contains", params: {} }] }] },
      "x-gateway-config.after_request_hooks[0].checks[0].params",
    ],
    [
      "unknown hook field",
      { before_request_hooks: [{ id: "x", chekcs: [] }] },
      "x-gateway-config.before_request_hooks[0].chekcs",
    ],
  ])("answers 400 naming the path: %s", (_what, hooks, param) => {
    expect(rejection({ provider: "openai", ...hooks }).param).toBe(param);
  });
});

describe("inheritance", () => {
  it("a target runs its parents' guardrails, then its own; siblings do not share theirs", () => {
    const root = compile({
      input_guardrails: ["gr_root"],
      strategy: { mode: "fallback" },
      targets: [
        {
          strategy: { mode: "loadbalance" },
          input_guardrails: ["gr_middle"],
          targets: [
            { provider: "openai", input_guardrails: ["gr_leaf"], output_guardrails: ["gr_out"] },
            { provider: "groq" },
          ],
        },
        { provider: "anthropic" },
      ],
    }) as StrategyNode;
    const refs = (node: ConfigNode, phase: "input" | "output") =>
      (node.settings.guardrails?.[phase] ?? []).map((entry) => ("ref" in entry ? entry.ref : entry.inline.id));
    const middle = root.targets[0] as StrategyNode;
    expect(refs(root, "input")).toEqual(["gr_root"]);
    expect(refs(middle, "input")).toEqual(["gr_root", "gr_middle"]);
    expect(refs(middle.targets[0]!, "input")).toEqual(["gr_root", "gr_middle", "gr_leaf"]);
    expect(refs(middle.targets[0]!, "output")).toEqual(["gr_out"]);
    expect(refs(middle.targets[1]!, "input")).toEqual(["gr_root", "gr_middle"]);
    expect(refs(root.targets[1]!, "input")).toEqual(["gr_root"]);
    // Targets without guardrails of their own share their parent's lists.
    expect(middle.targets[1]!.settings.guardrails).toBe(middle.settings.guardrails);
  });

  it("a root with guardrails and no provider routes to the provider of the request's headers", async () => {
    const root = compile({ input_guardrails: ["gr_1"], retry: { attempts: 2 } }) as LeafNode;
    expect(root).toMatchObject({ kind: "leaf", fromHeaders: true, path: "config" });
    expect(root.settings.retry?.attempts).toBe(2);
    // Still refused: no guardrails, or fields that only mean something with a provider.
    expect(rejection({ retry: { attempts: 2 } }).param).toBe("x-gateway-config.provider");
    expect(rejection({ input_guardrails: ["gr_1"], api_key: "sk-x" }).param).toBe("x-gateway-config.provider");
    expect(rejection({ strategy: { mode: "fallback" }, targets: [{ input_guardrails: ["gr_1"] }] }).param).toBe(
      "x-gateway-config.targets[0].provider",
    );
    // And a request that names no provider either is told so (400), not failed.
    const ctx = {
      traceId: "t",
      params: {},
      services: { settings: loadSettings({}), trustedHosts: trusted },
      signal: new AbortController().signal,
      waitUntil: () => {},
      startedAt: 0,
    } as unknown as RequestContext;
    const request = new Request("http://gateway/v1/chat/completions");
    const resolver = new LeafResolver(request, parseGatewayHeaders(request.headers, "t"), ctx);
    await expect(resolver.resolve(root)).rejects.toMatchObject({ status: 400, code: "missing_provider" });
    const named = new Request("http://gateway/v1/chat/completions", {
      headers: { "x-gateway-provider": "openai", authorization: "Bearer sk-test" },
    });
    const resolved = await new LeafResolver(named, parseGatewayHeaders(named.headers, "t"), ctx).resolve(root);
    expect(resolved.target).toMatchObject({ provider: "openai", apiKey: "sk-test" });
  });
});

describe("check parameters: validated once, with the path", () => {
  it("accepts valid parameters and fills in their defaults", async () => {
    const root = compile({ provider: "openai", input_guardrails: [{ "default.regexMatch": { rule: "x" } }] });
    await validateConfigGuardrails(root, "x-gateway-config");
    expect(inline(root.settings.guardrails!.input[0]).checks[0]!.parameters).toEqual({ rule: "x", not: false });
  });

  it.each([
    [
      "a pattern RE2 refuses",
      { input_guardrails: [{ "default.regexMatch": { rule: "(?<=a)b" } }] },
      'x-gateway-config.input_guardrails[0]["default.regexMatch"]',
    ],
    [
      "a parameter of the wrong type",
      { input_guardrails: [{ "default.regexMatch": { rule: 5 } }] },
      'x-gateway-config.input_guardrails[0]["default.regexMatch"].rule',
    ],
    [
      "an unknown check (shorthand)",
      { output_guardrails: [{ "default.nope": {} }] },
      'x-gateway-config.output_guardrails[0]["default.nope"]',
    ],
    [
      "an unknown check (hooks)",
      {
        strategy: { mode: "fallback" },
        targets: [{ provider: "openai", before_request_hooks: [{ checks: [{ id: "acme.thing", parameters: {} }] }] }],
      },
      "x-gateway-config.targets[0].before_request_hooks[0].checks[0].id",
    ],
    [
      "hook parameters",
      { after_request_hooks: [{ checks: [{ id: "default.regexMatch", parameters: { rule: "" } }] }] },
      "x-gateway-config.after_request_hooks[0].checks[0].parameters.rule",
    ],
  ])("%s: 400 naming the path", async (_what, raw, param) => {
    const root = compile("targets" in raw ? raw : { provider: "openai", ...raw });
    const error = await thrown(validateConfigGuardrails(root, "x-gateway-config"));
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 400, param, code: "invalid_config" });
  });

  it("an inline request config with a bad check answers 400; a good one is validated once and cached", async () => {
    const ctx = {
      traceId: "t",
      params: {},
      services: { settings: loadSettings({}), trustedHosts: parseTrustedHosts([]) } as unknown as Services,
      signal: new AbortController().signal,
      waitUntil: () => {},
      startedAt: 0,
    } as RequestContext;
    const resolve = (config: unknown) =>
      resolveRouting(parseGatewayHeaders(new Headers({ "x-gateway-config": JSON.stringify(config) }), "t"), ctx);
    await expect(
      resolve({ provider: "openai", input_guardrails: [{ "default.regexMatch": { rule: "(" } }] }),
    ).rejects.toMatchObject({ status: 400, param: 'x-gateway-config.input_guardrails[0]["default.regexMatch"]' });

    const good = { provider: "openai", input_guardrails: [{ "default.regexMatch": { rule: "ok" } }] };
    const first = await resolve(good);
    // Validated on the way in (the parsed parameters carry their defaults), then served from the cache.
    expect(inline(first!.settings.guardrails!.input[0]).checks[0]!.parameters).toEqual({ rule: "ok", not: false });
    expect(await resolve(good)).toBe(first);
  });
});

describe("saved configs", () => {
  let dataDir: string;
  let stores: LocalStores;
  let organisationId: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "gateway-config-guardrails-"));
    stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
    ({ organisationId } = await ensureOrganisation(stores.records));
  });

  afterAll(async () => {
    await stores?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const deps = () => ({
    records: stores.records,
    secrets: stores.secrets,
    trustedHosts: parseTrustedHosts([]),
    traceId: "trace-config-guardrails",
    organisationChanged: vi.fn(),
    organisationSettings: async () => ({}),
    forgetKey: vi.fn(),
    policyChanged: vi.fn(),
  });

  it("saving a config with a bad check parameter answers 400 naming the path; a good one is stored as written", async () => {
    const bad = { provider: "openai", output_guardrails: [{ "default.regexMatch": { rule: "a{2,1}" } }] };
    const error = await thrown(
      configs.createConfig(deps(), adminPrincipal(organisationId), { name: "Bad", config: bad }),
    );
    expect(error).toMatchObject({ status: 400, param: 'config.output_guardrails[0]["default.regexMatch"]' });

    const good = { provider: "openai", input_guardrails: ["gr_somewhere", { "default.regexMatch": { rule: "\\d+" } }] };
    const view = await configs.createConfig(deps(), adminPrincipal(organisationId), {
      name: "Guarded",
      slug: unique("guarded"),
      config: good,
    });
    expect(view.config).toEqual(good);
  });
});
