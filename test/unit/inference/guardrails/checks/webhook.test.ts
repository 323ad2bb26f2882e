import { describe, expect, it } from "vitest";
import { checkSpecProblem, findCheck } from "../../../../../core/inference/guardrails/checks/registry.ts";
import { webhook } from "../../../../../core/inference/guardrails/checks/webhook.ts";
import type { CheckEnvironment, CheckInput, CheckSpec } from "../../../../../core/inference/guardrails/types.ts";

interface PostCall {
  url: string;
  body: any;
  options: { headers?: Record<string, string>; timeoutMs: number; signal: AbortSignal };
}

/** An environment whose webhook answers `answer` (or throws it) and records what was posted. */
function fakeEnv(answer: { status: number; json: unknown } | Error) {
  const calls: PostCall[] = [];
  const env: CheckEnvironment = {
    async postJson(url, body, options) {
      calls.push({ url, body, options });
      if (answer instanceof Error) throw answer;
      return answer;
    },
    getJson: () => Promise.reject(new Error("not used")),
    infer: () => Promise.reject(new Error("not used")),
  };
  return { env, calls };
}

const request = {
  model: "gpt-4o-mini",
  stream: true,
  messages: [
    { role: "system", content: "You are a support agent for Acme." },
    {
      role: "user",
      content: [
        { type: "text", text: "My order 1234 is late." },
        { type: "text", text: "Refund?" },
      ],
    },
  ],
};
const answerBody = {
  id: "chatcmpl-1",
  object: "chat.completion",
  choices: [
    { index: 0, message: { role: "assistant", content: "I have refunded order 1234." }, finish_reason: "stop" },
  ],
};

function inputPhase(env: CheckEnvironment): CheckInput {
  return {
    phase: "input",
    route: "chat",
    text: "My order 1234 is late.\nRefund?",
    parts: ["You are a support agent for Acme.", "My order 1234 is late.", "Refund?"],
    request,
    model: "gpt-4o-mini",
    metadata: { _user: "u-42", team: "support" },
    headers: new Headers({
      authorization: "Bearer sk-caller-secret-0123456789abcdefghij",
      "x-gateway-api-key": "gw-key-secret",
      cookie: "session=abc",
    }),
    signal: new AbortController().signal,
    env,
  };
}

function outputPhase(env: CheckEnvironment): CheckInput {
  return {
    ...inputPhase(env),
    phase: "output",
    text: "I have refunded order 1234.",
    parts: ["I have refunded order 1234."],
    response: answerBody,
  };
}

async function parsed(parameters: Record<string, unknown>) {
  const spec: CheckSpec = { id: "default.webhook", parameters };
  expect(await checkSpecProblem(spec)).toBeUndefined();
  return spec.parameters as never;
}

const URL_WITH_TOKEN = "https://hooks.example.com/guard/T0001/s3cr3t-path-token";

describe("default.webhook", () => {
  it("is registered", async () => {
    expect(await findCheck("default.webhook")).toBe(webhook);
  });

  it("posts Portkey's payload with the check's headers only, and takes the verdict", async () => {
    const { env, calls } = fakeEnv({ status: 200, json: { verdict: true } });
    const parameters = await parsed({ webhookURL: URL_WITH_TOKEN, headers: { Authorization: "Bearer hook-token" } });
    const result = await webhook.run(inputPhase(env), parameters);

    expect(result).toEqual({ verdict: true, explanation: "The webhook passed the request.", data: {} });
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.url).toBe(URL_WITH_TOKEN);
    expect(call!.options.headers).toEqual({ Authorization: "Bearer hook-token" });
    expect(call!.options.timeoutMs).toBe(3_000);
    expect(call!.body).toEqual({
      request: { json: request, text: "My order 1234 is late.\nRefund?", isStreamingRequest: true },
      response: { json: {}, text: "" },
      requestType: "chatComplete",
      metadata: { _user: "u-42", team: "support" },
      eventType: "beforeRequestHook",
    });
    // The caller's credentials never reach the webhook, in headers or in the body.
    expect(JSON.stringify(call)).not.toMatch(/sk-caller-secret|gw-key-secret|session=abc/);
  });

  it("sends the answer on output, and the request's last message as its text", async () => {
    const { env, calls } = fakeEnv({ status: 200, json: { verdict: false, data: { rule: "no-refunds" } } });
    const result = await webhook.run(outputPhase(env), await parsed({ webhookURL: URL_WITH_TOKEN, timeout: 800 }));

    expect(result).toEqual({
      verdict: false,
      explanation: "The webhook refused the answer.",
      data: { webhook_data: { rule: "no-refunds" } },
    });
    expect(calls[0]!.options).toMatchObject({ headers: undefined, timeoutMs: 800 });
    expect(calls[0]!.body).toMatchObject({
      request: { text: "My order 1234 is late.\nRefund?" },
      response: { json: answerBody, text: "I have refunded order 1234." },
      eventType: "afterRequestHook",
    });
  });

  it("takes Portkey's transformedData as a rewrite of the phase's texts", async () => {
    const rewritten = structuredClone(request);
    rewritten.messages[1]!.content = [
      { type: "text", text: "My order [ID] is late." },
      { type: "text", text: "Refund?" },
    ];
    const { env } = fakeEnv({
      status: 200,
      json: { verdict: true, transformedData: { request: { json: rewritten } } },
    });
    const result = await webhook.run(inputPhase(env), await parsed({ webhookURL: URL_WITH_TOKEN }));
    expect(result).toEqual({
      verdict: true,
      explanation: "The webhook rewrote the request.",
      data: {},
      transformedParts: ["You are a support agent for Acme.", "My order [ID] is late.", "Refund?"],
    });

    const answer = { ...answerBody, choices: [{ index: 0, message: { role: "assistant", content: "Refunded." } }] };
    const output = fakeEnv({ status: 200, json: { verdict: true, transformedData: { response: { json: answer } } } });
    const outputResult = await webhook.run(outputPhase(output.env), await parsed({ webhookURL: URL_WITH_TOKEN }));
    expect(outputResult.transformedParts).toEqual(["Refunded."]);
  });

  it("ignores a rewrite that changes nothing, and refuses one that adds or drops texts", async () => {
    const same = fakeEnv({ status: 200, json: { verdict: true, transformedData: { request: { json: request } } } });
    const result = await webhook.run(inputPhase(same.env), await parsed({ webhookURL: URL_WITH_TOKEN }));
    expect(result.transformedParts).toBeUndefined();

    const fewer = { ...request, messages: [{ role: "user", content: "Refund?" }] };
    const dropped = fakeEnv({ status: 200, json: { verdict: true, transformedData: { request: { json: fewer } } } });
    await expect(webhook.run(inputPhase(dropped.env), await parsed({ webhookURL: URL_WITH_TOKEN }))).rejects.toThrow(
      "the webhook's rewrite has 1 texts where the input has 3: a rewrite may change texts, not add or remove them",
    );
  });

  describe("a failed call", () => {
    const failures: Array<[string, { status: number; json: unknown } | Error, string]> = [
      ["a 500", { status: 500, json: { error: "boom" } }, "the webhook answered HTTP 500"],
      ["no verdict", { status: 200, json: { ok: true } }, 'the webhook\'s answer has no boolean "verdict"'],
      [
        "a string verdict",
        { status: 200, json: { verdict: "true" } },
        'the webhook\'s answer has no boolean "verdict"',
      ],
      ["not JSON", { status: 200, json: undefined }, 'the webhook\'s answer has no boolean "verdict"'],
    ];

    for (const [what, answer, message] of failures) {
      it(`is an error without failOnError (${what}): the guardrail's on_error decides`, async () => {
        const { env } = fakeEnv(answer);
        await expect(webhook.run(inputPhase(env), await parsed({ webhookURL: URL_WITH_TOKEN }))).rejects.toThrow(
          message,
        );
      });
    }

    it("fails the check with failOnError true and passes it with false", async () => {
      const { env } = fakeEnv({ status: 503, json: undefined });
      const failing = await webhook.run(
        inputPhase(env),
        await parsed({ webhookURL: URL_WITH_TOKEN, failOnError: true }),
      );
      expect(failing).toEqual({
        verdict: false,
        explanation: "The webhook answered HTTP 503: the check fails (failOnError).",
        data: { error: "the webhook answered HTTP 503" },
      });
      const passing = await webhook.run(
        inputPhase(env),
        await parsed({ webhookURL: URL_WITH_TOKEN, failOnError: false }),
      );
      expect(passing.verdict).toBe(true);
    });

    it("never shows the webhook's path (it may hold a token) when the call itself fails", async () => {
      const { env } = fakeEnv(new TypeError(`fetch failed for ${URL_WITH_TOKEN}: ECONNREFUSED`));
      const result = await webhook.run(
        inputPhase(env),
        await parsed({ webhookURL: URL_WITH_TOKEN, failOnError: true }),
      );
      expect(result.verdict).toBe(false);
      expect(result.explanation).toBe(
        "The webhook call failed (TypeError: fetch failed for https://hooks.example.com ECONNREFUSED): the check " +
          "fails (failOnError).",
      );
      expect(JSON.stringify(result)).not.toContain("s3cr3t");
    });

    it("leaves a timeout of the check itself to the runner, whatever failOnError says", async () => {
      const controller = new AbortController();
      const { env } = fakeEnv(new DOMException("This operation was aborted", "AbortError"));
      const input = { ...inputPhase(env), signal: controller.signal };
      controller.abort();
      await expect(
        webhook.run(input, await parsed({ webhookURL: URL_WITH_TOKEN, failOnError: false })),
      ).rejects.toThrow("aborted");
    });
  });

  it("keeps a large webhook data out of the verdict, saying only its size", async () => {
    const { env } = fakeEnv({ status: 200, json: { verdict: true, data: { echo: "x".repeat(5_000) } } });
    const result = await webhook.run(inputPhase(env), await parsed({ webhookURL: URL_WITH_TOKEN }));
    expect(result.data).toEqual({ webhook_data_size: 5_011 });
  });

  describe("parameters", () => {
    it("accept headers as Portkey's UI stores them, JSON text", async () => {
      expect(await parsed({ webhookURL: URL_WITH_TOKEN, headers: '{"X-Api-Key":"hook-key"}' })).toEqual({
        webhookURL: URL_WITH_TOKEN,
        headers: { "X-Api-Key": "hook-key" },
        timeout: 3_000,
      });
    });

    const refused: Array<[Record<string, unknown>, string, string]> = [
      [{}, "parameters.webhookURL", "Invalid input: expected string, received undefined"],
      [{ webhookURL: "ftp://hooks.example.com/x" }, "parameters.webhookURL", "expected an http(s) URL"],
      [{ webhookURL: "not a url" }, "parameters.webhookURL", "expected an http(s) URL"],
      [
        { webhookURL: "https://user:pass@hooks.example.com/x" },
        "parameters.webhookURL",
        "credentials go in headers, not in the URL",
      ],
      [
        { webhookURL: URL_WITH_TOKEN, headers: "{not json" },
        "parameters.headers",
        "headers must be a JSON object of header names and values",
      ],
      [
        { webhookURL: URL_WITH_TOKEN, headers: { "X-Evil": "a\r\nHost: internal" } },
        "parameters.headers.X-Evil",
        "header 'X-Evil' must be at most 4096 printable characters on one line",
      ],
      [
        { webhookURL: URL_WITH_TOKEN, headers: { Host: "internal" } },
        "parameters.headers.Host",
        "header 'Host' is set by the gateway",
      ],
      [
        { webhookURL: URL_WITH_TOKEN, headers: { "Bad Name": "x" } },
        "parameters.headers.Bad Name",
        "header 'Bad Name' is not a header name",
      ],
      [{ webhookURL: URL_WITH_TOKEN, timeout: 0 }, "parameters.timeout", "Too small: expected number to be >=1"],
    ];
    for (const [parameters, path, message] of refused) {
      it(`refuse ${JSON.stringify(parameters)}`, async () => {
        expect(await checkSpecProblem({ id: "default.webhook", parameters })).toEqual({ path, message });
      });
    }
  });
});
