import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "./mock-server.ts";

/**
 * An OpenAI-shaped upstream that misbehaves on request: the first path segment picks the behaviour, so one
 * server plays every target of a config (`custom_host: ${url}/<behaviour>/v1`).
 *
 *   ok            200 chat completion (or SSE stream) whose content names the behaviour
 *   500|502|503   that status with an OpenAI error body
 *   429           429 with `retry-after-ms` (see `retryAfterMs` below) and `retry-after: 1`
 *   slow          answers after 2 s (beyond the tests' timeouts)
 *   reset         destroys the connection before answering
 *   malformed     200 with a body that is not JSON
 *   redirect      302 to http://169.254.169.254/
 *   stream-before 200 SSE headers, then the connection dies before the first event
 *   stream-after  one SSE chunk, then the connection dies
 *   stream-empty  200 SSE headers, then the body ends with no event at all
 *   stream-html   200 with an HTML page for a stream request (a proxy's error page)
 *   stream-nonjson 200 SSE whose data events are not JSON, then [DONE]
 *   flaky-<id>-<n> the first n calls with that id answer 503, then ok
 *   ok-<name>     like ok, content "<name>" (to tell targets apart)
 */
export interface FaultUpstream extends MockServer {
  hits(behaviour: string): number;
  /** Base URL (with /v1) of a behaviour. */
  host(behaviour: string): string;
  retryAfterMs: number;
}

const completion = (content: string, model: string) => ({
  id: "chatcmpl-fault",
  object: "chat.completion",
  created: 1_700_000_000,
  model,
  choices: [
    { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" },
  ],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
});

const chunk = (content: string, model: string, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-fault", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: finish }] })}\n\n`;

export async function startFaultUpstream(): Promise<FaultUpstream> {
  const counts = new Map<string, number>();
  const flaky = new Map<string, number>();
  let server!: FaultUpstream;

  const answerOk = (req: RecordedRequest, res: ServerResponse, content: string) => {
    const body = req.body.length > 0 ? req.json() : {};
    const model = String(body.model ?? "m");
    if (body.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk(content, model));
      res.write(chunk("", model, "stop"));
      res.end("data: [DONE]\n\n");
      return;
    }
    sendJson(res, 200, completion(content, model));
  };

  const base = await startMockServer(async (req, res) => {
    const [, behaviour = "", ...rest] = req.path.split("/");
    counts.set(behaviour, (counts.get(behaviour) ?? 0) + 1);
    void rest;
    if (behaviour === "ok") return answerOk(req, res, "ok");
    if (behaviour.startsWith("ok-")) return answerOk(req, res, behaviour.slice(3));
    if (/^5\d\d$/.test(behaviour))
      return sendJson(res, Number(behaviour), {
        error: { message: `failure ${behaviour}`, type: "server_error", code: `upstream_${behaviour}` },
      });
    if (behaviour === "429") {
      return sendJson(
        res,
        429,
        { error: { message: "slow down", type: "rate_limit_error", code: "rate_limited" } },
        { "retry-after-ms": String(server.retryAfterMs), "retry-after": "1" },
      );
    }
    if (behaviour === "slow") {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      if (!res.destroyed) answerOk(req, res, "slow");
      return;
    }
    if (behaviour === "reset") return void res.socket?.destroy();
    if (behaviour === "malformed") {
      res.writeHead(200, { "content-type": "application/json" });
      return void res.end("{not json");
    }
    if (behaviour === "redirect") {
      res.writeHead(302, { location: "http://169.254.169.254/latest/meta-data/" });
      return void res.end();
    }
    if (behaviour === "stream-before") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.flushHeaders();
      await new Promise((resolve) => setTimeout(resolve, 20));
      return void res.socket?.destroy();
    }
    if (behaviour === "stream-after") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write(chunk("partial", "m"));
      await new Promise((resolve) => setTimeout(resolve, 50));
      return void res.socket?.destroy();
    }
    if (behaviour === "stream-empty") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return void res.end();
    }
    if (behaviour === "stream-html") {
      res.writeHead(200, { "content-type": "text/html" });
      return void res.end("<html><body>Bad gateway</body></html>");
    }
    if (behaviour === "stream-nonjson") {
      res.writeHead(200, { "content-type": "text/event-stream" });
      return void res.end("data: not json\n\ndata: [DONE]\n\n");
    }
    const flakyMatch = /^flaky-(\w+)-(\d+)$/.exec(behaviour);
    if (flakyMatch) {
      const seen = flaky.get(flakyMatch[1]!) ?? 0;
      flaky.set(flakyMatch[1]!, seen + 1);
      if (seen < Number(flakyMatch[2]))
        return sendJson(res, 503, { error: { message: "try again", type: "server_error", code: "overloaded" } });
      return answerOk(req, res, "flaky");
    }
    sendJson(res, 404, {
      error: { message: `no behaviour ${behaviour}`, type: "invalid_request_error", code: "not_found" },
    });
  });

  server = Object.assign(base, {
    hits: (behaviour: string) => counts.get(behaviour) ?? 0,
    host: (behaviour: string) => `${base.url}/${behaviour}/v1`,
    retryAfterMs: 0,
  });
  return server;
}
