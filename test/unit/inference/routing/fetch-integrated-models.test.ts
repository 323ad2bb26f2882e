import { describe, expect, it } from "vitest";
import { HttpError } from "../../../../core/http/errors.ts";
import { compileConfig } from "../../../../core/inference/routing/config.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/** The config root's `fetch_integrated_models` (spec 4.6): a boolean of the root only. */

const compile = (raw: unknown) => compileConfig(raw, parseTrustedHosts([]));

function rejection(raw: unknown): HttpError {
  try {
    compile(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(HttpError);
    return error as HttpError;
  }
  throw new Error("config was accepted");
}

describe("fetch_integrated_models", () => {
  it("is carried on the compiled root (snake or camel case), absent otherwise", () => {
    expect(compile({ provider: "openai", fetch_integrated_models: true }).fetchIntegratedModels).toBe(true);
    const strategy = compile({
      fetchIntegratedModels: true,
      strategy: { mode: "fallback" },
      targets: [{ provider: "openai" }, { provider: "google" }],
    });
    expect(strategy.fetchIntegratedModels).toBe(true);
    expect(compile({ provider: "openai", fetch_integrated_models: false }).fetchIntegratedModels).toBeUndefined();
    expect(compile({ provider: "openai" }).fetchIntegratedModels).toBeUndefined();
  });

  it("answers 400 naming the field when it is not a boolean or not at the root", () => {
    const wrongType = rejection({ provider: "openai", fetch_integrated_models: "true" });
    expect(wrongType.status).toBe(400);
    expect(wrongType.param).toBe("x-gateway-config.fetch_integrated_models");
    const nested = rejection({
      strategy: { mode: "fallback" },
      targets: [{ provider: "openai", fetch_integrated_models: true }],
    });
    expect(nested.param).toBe("x-gateway-config.targets[0].fetch_integrated_models");
    expect(nested.message).toContain("root only");
  });
});
