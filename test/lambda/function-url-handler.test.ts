import { beforeEach, describe, expect, it } from "vitest";
import { createFunctionUrlHandler, type StreamingLambdaHandler } from "../../core/platform/aws/function-url-handler.ts";
import { StoreUnavailableError } from "../../core/store/ports.ts";
import { installAwsLambdaGlobal, invoke, splitPrelude, start } from "./awslambda-runtime.ts";
import { createTestApp, functionUrlEvent, observations } from "./fake-app.ts";

// middy's streamify mode calls awslambda.streamifyResponse when the handler is created.
installAwsLambdaGlobal();

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8");

let handler: StreamingLambdaHandler;

beforeEach(() => {
  for (const key of Object.keys(observations)) delete observations[key as keyof typeof observations];
  const app = createTestApp();
  handler = createFunctionUrlHandler(async () => app);
});

describe("function URL adapter", () => {
  it("streams a GET's status, headers and cookies in the wire prelude, then the body", async () => {
    const result = await invoke(handler, functionUrlEvent("GET", "/hello"));

    const raw = result.stream.bytes;
    const delimiterAt = raw.indexOf(Buffer.alloc(8));
    expect(JSON.parse(text(raw.subarray(0, delimiterAt)))).toEqual(result.prelude);
    expect(result.prelude.statusCode).toBe(200);
    expect(result.prelude.headers).toMatchObject({ "content-type": "application/json", "x-custom": "yes" });
    expect(result.prelude.headers["x-gateway-trace-id"]).toMatch(/\S+/);
    expect(result.prelude.headers["set-cookie"]).toBeUndefined();
    expect(result.prelude.cookies).toEqual(["session=abc; Path=/; HttpOnly", "theme=dark; Path=/"]);
    expect(JSON.parse(text(result.body))).toEqual({ hello: "world" });
  });

  it("writes each SSE event as it is produced, in order, without buffering the body", async () => {
    const result = await invoke(handler, functionUrlEvent("GET", "/events"));

    expect(result.prelude.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(result.bodyWrites.map((write) => text(write.bytes))).toEqual([
      'data: {"index":0}\n\n',
      'data: {"index":1}\n\n',
      'data: {"index":2}\n\n',
      "data: [DONE]\n\n",
    ]);
    // The first event reached the response stream before the last one even existed.
    expect(result.bodyWrites[0].at).toBeLessThan(observations.lastEventProducedAt!);
    for (let index = 1; index < result.bodyWrites.length; index++) {
      expect(result.bodyWrites[index].at).toBeGreaterThanOrEqual(result.bodyWrites[index - 1].at);
    }
  });

  it("builds the Request's URL from a forwarded host only when it is a plain host[:port]", async () => {
    for (const [forwarded, host] of [
      ["gateway.example.com:8443", "gateway.example.com:8443"],
      ["a?", "abc.lambda-url.us-east-1.on.aws"],
      ["a/b", "abc.lambda-url.us-east-1.on.aws"],
      ["a#", "abc.lambda-url.us-east-1.on.aws"],
    ]) {
      const event = functionUrlEvent("POST", "/echo", { headers: { "x-forwarded-host": forwarded! } });
      event.requestContext.domainName = "abc.lambda-url.us-east-1.on.aws";
      const body = JSON.parse(text((await invoke(handler, event)).body));
      expect({ host: body.host, path: body.path }).toEqual({ host, path: "/echo" });
    }
  });

  it("hands the app a Request with the decoded base64 body, query string, headers and cookies", async () => {
    const event = functionUrlEvent("POST", "/echo", {
      rawQueryString: "x=1&name=two%20words",
      headers: { "content-type": "text/plain", "x-multi": "a,b", "x-forwarded-host": "gateway.example.com" },
      cookies: ["session=abc", "theme=dark"],
      body: Buffer.from("héllo wörld").toString("base64"),
      isBase64Encoded: true,
    });
    const result = await invoke(handler, event);

    expect(result.prelude.statusCode).toBe(200);
    expect(JSON.parse(text(result.body))).toEqual({
      method: "POST",
      host: "gateway.example.com",
      path: "/echo",
      query: { x: "1", name: "two words" },
      cookie: "session=abc; theme=dark",
      contentType: "text/plain",
      multi: "a,b",
      body: "héllo wörld",
    });
  });

  it("passes a plain-text body as it is", async () => {
    const event = functionUrlEvent("POST", "/echo", {
      body: '{"a":1}',
      headers: { "content-type": "application/json" },
    });
    const result = await invoke(handler, event);
    expect(JSON.parse(text(result.body))).toMatchObject({
      body: '{"a":1}',
      host: "abc123.lambda-url.us-east-1.on.aws",
    });
  });

  it("answers a handler's exception with an OpenAI-shaped 500 and no internals", async () => {
    const result = await invoke(
      handler,
      functionUrlEvent("GET", "/boom", { headers: { "x-gateway-trace-id": "t-1" } }),
    );

    expect(result.prelude.statusCode).toBe(500);
    expect(result.prelude.headers["content-type"]).toBe("application/json");
    const body = JSON.parse(text(result.body));
    expect(body).toEqual({
      error: {
        message: "Internal server error (trace id t-1).",
        type: "server_error",
        param: null,
        code: "internal_error",
      },
    });
  });

  it("answers an unknown path with the app's OpenAI-shaped 404", async () => {
    const result = await invoke(handler, functionUrlEvent("GET", "/nowhere"));
    expect(result.prelude.statusCode).toBe(404);
    expect(JSON.parse(text(result.body)).error.code).toBe("unknown_url");
  });

  it("finishes waitUntil work before the invocation ends, after the response is complete", async () => {
    const result = await invoke(handler, functionUrlEvent("GET", "/background"));

    expect(JSON.parse(text(result.body))).toEqual({ accepted: true });
    expect(observations.backgroundDoneAt).toBeDefined();
    expect(result.stream.finishedAt!).toBeLessThan(observations.backgroundDoneAt!);
    expect(observations.backgroundDoneAt!).toBeLessThanOrEqual(result.endedAt);
  });

  it("aborts the request signal when the client goes away mid-stream", async () => {
    const invocation = start(handler, functionUrlEvent("GET", "/endless"));
    while (invocation.stream.writes.length < 3) await tick();

    invocation.stream.destroy(new Error("client went away"));
    await invocation.done.catch(() => {});

    expect(observations.abortReason).toBeDefined();
    expect(observations.sourceClosed).toBe(true);
  });

  it("ends a stream gracefully, signal aborted, shortly before the Lambda deadline", async () => {
    const context = deadlineIn(1150);
    const result = await invoke(handler, functionUrlEvent("GET", "/endless"), context);

    expect(result.prelude.statusCode).toBe(200);
    expect((observations.abortReason as DOMException).name).toBe("TimeoutError");
    expect(observations.sourceClosed).toBe(true);
    expect(text(result.body).endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("answers 504 when the app has not answered by the Lambda deadline", async () => {
    const result = await invoke(handler, functionUrlEvent("GET", "/slow"), deadlineIn(1100));

    expect(result.prelude.statusCode).toBe(504);
    expect(JSON.parse(text(result.body)).error.type).toBe("server_error");
    expect((observations.abortReason as DOMException).name).toBe("TimeoutError");
  });
});

describe("container initialisation", () => {
  it("builds the app once, at the first invocation", async () => {
    let builds = 0;
    const app = createTestApp();
    const lazyHandler = createFunctionUrlHandler(async () => {
      builds++;
      return app;
    });
    expect(builds).toBe(0);
    await invoke(lazyHandler, functionUrlEvent("GET", "/hello"));
    await invoke(lazyHandler, functionUrlEvent("GET", "/hello"));
    expect(builds).toBe(1);
  });

  it("answers a failed initialisation with an OpenAI-shaped error and retries it on the next invocation", async () => {
    let builds = 0;
    const app = createTestApp();
    const flaky = createFunctionUrlHandler(async () => {
      builds++;
      if (builds === 1) throw new StoreUnavailableError("DynamoDB throttled the bootstrap read");
      return app;
    });

    const first = await invoke(flaky, functionUrlEvent("GET", "/hello"));
    expect(first.prelude.statusCode).toBe(503);
    expect(JSON.parse(text(first.body)).error.code).toBe("service_unavailable");

    const second = await invoke(flaky, functionUrlEvent("GET", "/hello"));
    expect(second.prelude.statusCode).toBe(200);
    expect(builds).toBe(2);
  });
});

describe("the awslambda stand-in", () => {
  it("rejects a handler that was not wrapped by streamifyResponse", () => {
    const plain = (async () => {}) as unknown as StreamingLambdaHandler;
    expect(() => start(plain, functionUrlEvent("GET", "/hello"))).toThrow(/streamifyResponse/);
  });

  it("refuses a stream without the prelude", async () => {
    const invocation = start(handler, functionUrlEvent("GET", "/hello"));
    await invocation.done;
    invocation.stream.contentType = undefined;
    expect(() => splitPrelude(invocation.stream)).toThrow(/prelude/);
  });
});

/** A Lambda context whose deadline is `ms` from now. */
function deadlineIn(ms: number) {
  const deadline = performance.now() + ms;
  return { getRemainingTimeInMillis: () => Math.max(0, Math.round(deadline - performance.now())) };
}

function tick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5));
}
