import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { keepAliveWhileWaiting } from "../../../../core/features/mcp/endpoint/keep-alive.ts";

/** A promise settled from outside. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const options = { intervalMs: 40, lateFailure: () => ({ jsonrpc: "2.0", id: 1, error: { code: -32603 } }) };

/** The body's chunks as text, as a client reads them. */
async function chunksOf(response: Response): Promise<string[]> {
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of response.body!) chunks.push(decoder.decode(chunk));
  return chunks;
}

describe("keepAliveWhileWaiting", () => {
  it("passes an answer ready within the interval on as it is, its HTTP status kept", async () => {
    const answer = json({ jsonrpc: "2.0", id: 1, error: { code: -32020 } }, 400);
    const response = await keepAliveWhileWaiting(Promise.resolve(answer), options);
    expect(response).toBe(answer);
    expect(response.status).toBe(400);
  });

  it("commits a late JSON answer to an event stream: comments while waiting, then the answer as one event", async () => {
    const answer = deferred<Response>();
    const response = await keepAliveWhileWaiting(answer.promise, options);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    // One comment at once, then one every interval, for as long as the answer takes.
    const reader = response.body!.getReader();
    for (let index = 0; index < 3; index++)
      expect(new TextDecoder().decode((await reader.read()).value)).toBe(": keepalive\n\n");
    answer.resolve(json({ jsonrpc: "2.0", id: 1, result: { content: [] } }));
    const rest: string[] = [];
    for (let read = await reader.read(); !read.done; read = await reader.read())
      rest.push(new TextDecoder().decode(read.value));
    expect(rest.at(-1)).toBe('event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"content":[]}}\n\n');
    expect(rest.slice(0, -1).every((chunk) => chunk === ": keepalive\n\n")).toBe(true);
  });

  it("passes a late event stream on as it comes, and stops its own comments", async () => {
    const answer = deferred<Response>();
    const response = await keepAliveWhileWaiting(answer.promise, options);
    const reading = chunksOf(response);
    await sleep(60);
    const upstream = new Response("event: message\ndata: {}\n\n", { headers: { "content-type": "text/event-stream" } });
    answer.resolve(upstream);
    const chunks = await reading;
    expect(chunks[0]).toBe(": keepalive\n\n");
    expect(chunks.at(-1)).toBe("event: message\ndata: {}\n\n");
  });

  it("tells a late failure as the request's JSON-RPC error, and a multi-line answer line by line", async () => {
    const failed = deferred<Response>();
    const failing = await keepAliveWhileWaiting(failed.promise, options);
    failed.reject(new Error("boom"));
    expect((await chunksOf(failing)).at(-1)).toBe(
      'event: message\ndata: {"jsonrpc":"2.0","id":1,"error":{"code":-32603}}\n\n',
    );
    const pretty = deferred<Response>();
    const multiLine = await keepAliveWhileWaiting(pretty.promise, options);
    pretty.resolve(new Response('{\n  "id": 1\n}', { headers: { "content-type": "application/json" } }));
    expect((await chunksOf(multiLine)).at(-1)).toBe('event: message\ndata: {\ndata:   "id": 1\ndata: }\n\n');
  });

  it("rethrows a failure within the interval (the caller answers it as before)", async () => {
    await expect(keepAliveWhileWaiting(Promise.reject(new Error("early")), options)).rejects.toThrow("early");
  });

  it("lets go of the answer's body when the client goes away before it came", async () => {
    const answer = deferred<Response>();
    const response = await keepAliveWhileWaiting(answer.promise, options);
    await response.body!.cancel();
    let cancelled = false;
    const body = new ReadableStream({
      cancel() {
        cancelled = true;
      },
    });
    answer.resolve(new Response(body, { headers: { "content-type": "text/event-stream" } }));
    await expect.poll(() => cancelled).toBe(true);
  });
});
