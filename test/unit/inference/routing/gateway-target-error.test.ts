import { afterEach, describe, expect, it, vi } from "vitest";
import { recordedAttempt } from "../../../../core/inference/gateway/plan.ts";
import type { InferenceOutcome } from "../../../../core/inference/gateway/outcome.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { compileConfig, type LeafNode } from "../../../../core/inference/routing/config.ts";
import { gatewayTargetError, RoutingFailure, runStrategy } from "../../../../core/inference/routing/engine.ts";
import { parseTrustedHosts } from "../../../../core/security/custom-host.ts";

/**
 * A target that throws inside the gateway (a transform, a signer) is a failed target: the attempt is recorded
 * as a 502 naming the error, a fallback moves on whatever its on_status_codes, and alone it ends in a 502.
 */

const config = compileConfig(
  {
    strategy: { mode: "fallback", on_status_codes: [429] },
    targets: [
      { provider: "openai", api_key: "first" },
      { provider: "openai", api_key: "second" },
    ],
  },
  parseTrustedHosts([]),
);

afterEach(() => vi.restoreAllMocks());

function io(first: () => Promise<Response>, outcome: InferenceOutcome) {
  return {
    signal: new AbortController().signal,
    queryContext: () => ({ metadata: {}, params: {}, url: { pathname: "/v1/chat/completions" } }),
    call: (leaf: LeafNode, retry: number) =>
      recordedAttempt(outcome, { path: leaf.path, provider: "openai", retry }, () =>
        leaf.apiKey === "first" ? first() : Promise.resolve(new Response("ok")),
      ),
  };
}

describe("a target that throws inside the gateway", () => {
  it("is recorded as a 502 attempt and the fallback moves on, even with on_status_codes", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const outcome = { requestedModel: "m" } as InferenceOutcome;
    const result = await runStrategy(
      config,
      io(async () => {
        throw new TypeError("SignatureV4 is not a constructor");
      }, outcome),
    );
    expect(await result.response.text()).toBe("ok");
    expect(outcome.attempts?.[0]).toMatchObject({
      status: 502,
      error: "The gateway failed while calling the provider: TypeError: SignatureV4 is not a constructor",
    });
    expect(outcome.attempts?.[1]).toMatchObject({ status: 200 });
  });

  it("alone, ends in a 502 gateway_target_error; the client's own errors still end the request as they are", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const single = compileConfig({ provider: "openai", api_key: "first" }, parseTrustedHosts([]));
    const failure = await runStrategy(
      single,
      io(
        async () => {
          throw new Error("boom");
        },
        { requestedModel: "m" } as InferenceOutcome,
      ),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RoutingFailure);
    expect((failure as RoutingFailure).error).toMatchObject({ status: 502, code: "gateway_target_error" });

    const rejected = await runStrategy(
      config,
      io(
        async () => {
          throw new HttpError(400, "bad config");
        },
        { requestedModel: "m" } as InferenceOutcome,
      ),
    ).catch((error: unknown) => error);
    expect(rejected).toBeInstanceOf(HttpError);
  });

  it("never repeats what the error quotes (a parser quotes the credential it read)", () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    let thrown: unknown;
    try {
      JSON.parse('{"private_key": "-----BEGIN PRIVATE KEY-----secret');
    } catch (error) {
      thrown = error;
    }
    const converted = gatewayTargetError(thrown);
    expect(converted.message).toMatch(/^The gateway failed while calling the provider: SyntaxError: /);
    expect(converted.message).not.toContain("secret");
    expect(converted.message).not.toContain("PRIVATE KEY");
  });
});
