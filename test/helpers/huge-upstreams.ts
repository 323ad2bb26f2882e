import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** What one huge answer did: bytes written, and whether the client hung up before the end. */
export interface HugeAnswer {
  written: number;
  cut: boolean;
}

/**
 * An MCP server speaking the streamable HTTP transport as the MCP specification (2025-06-18) describes it:
 * JSON-RPC over POST, a request answered as `application/json` or as a `text/event-stream` whose `message`
 * event carries the response, a notification answered 202, GET answered 405 (no server-initiated stream). Its
 * one tool, `dump`, answers a text result of `resultBytes` bytes, as JSON or as one SSE event (argument
 * `format`), written from one reused 1 MiB buffer with backpressure: the test process never holds the answer.
 * It records how many bytes each answer wrote before it ended or the client hung up.
 */
export interface HugeMcpUpstream {
  url: string;
  /** One entry per `dump` answer. */
  answers: HugeAnswer[];
  close(): Promise<void>;
}

const CHUNK = Buffer.alloc(1024 * 1024, "a");

export async function startHugeMcpUpstream(resultBytes: number): Promise<HugeMcpUpstream> {
  const answers: HugeMcpUpstream["answers"] = [];
  const http = createServer(async (req, res) => {
    if (req.method !== "POST") return void res.writeHead(405, { allow: "POST" }).end();
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const message = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      id?: string | number;
      method: string;
      params?: { name?: string; arguments?: { format?: string } };
    };
    if (message.id === undefined) return void res.writeHead(202).end();
    const reply = (result: unknown) =>
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }));
    if (message.method === "initialize")
      return reply({
        protocolVersion: "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "huge-upstream", version: "1.0.0" },
      });
    if (message.method === "tools/list")
      return reply({
        tools: [{ name: "dump", description: "Answers a very large text.", inputSchema: { type: "object" } }],
      });
    if (message.method === "tools/call" && message.params?.name === "dump") {
      const sse = message.params.arguments?.format === "sse";
      const head = `${sse ? "event: message\ndata: " : ""}{"jsonrpc":"2.0","id":${JSON.stringify(message.id)},"result":{"content":[{"type":"text","text":"`;
      const answer = writeHugeAnswer(res, {
        contentType: sse ? "text/event-stream" : "application/json",
        head,
        tail: `"}]}}${sse ? "\n\n" : ""}`,
        fillBytes: resultBytes,
      });
      answers.push(answer.record);
      await answer.done;
      return;
    }
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ jsonrpc: "2.0", id: message.id, error: { code: -32601, message: "Method not found" } }));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

/**
 * Writes `head`, `fillBytes` bytes of `a`, then `tail`, chunk by chunk with backpressure, stopping when the
 * client hangs up.
 */
export function writeHugeAnswer(
  res: ServerResponse,
  answer: { contentType: string; head: string; tail: string; fillBytes: number },
): { record: HugeAnswer; done: Promise<void> } {
  const record: HugeAnswer = { written: 0, cut: false };
  res.writeHead(200, { "content-type": answer.contentType });
  res.on("close", () => {
    record.cut = !res.writableFinished;
  });
  const write = async (bytes: Buffer | string): Promise<boolean> => {
    if (res.destroyed) return false;
    record.written += Buffer.byteLength(bytes);
    if (!res.write(bytes))
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.on("drain", done);
        res.on("close", done);
      });
    return !res.destroyed;
  };
  const done = (async () => {
    if (!(await write(answer.head))) return;
    for (let left = answer.fillBytes; left > 0; left -= CHUNK.length) {
      if (!(await write(left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)))) return;
    }
    if (await write(answer.tail)) res.end();
  })();
  return { record, done };
}

/**
 * An A2A agent (A2A 0.3 JSON-RPC, as its specification describes: the card at
 * `/.well-known/agent-card.json`, `message/send` answered with a Message) whose every answer is a message
 * of `fillBytes` bytes of text, written like the MCP server's above.
 */
export interface HugeAgent {
  url: string;
  answers: HugeAnswer[];
  close(): Promise<void>;
}

export async function startHugeAgent(fillBytes: number): Promise<HugeAgent> {
  const answers: HugeAnswer[] = [];
  let base = "";
  const http = createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          name: "Huge agent",
          description: "Answers at length.",
          version: "1.0.0",
          url: `${base}/a2a`,
          preferredTransport: "JSONRPC",
          protocolVersion: "0.3.0",
          capabilities: { streaming: false },
          defaultInputModes: ["text/plain"],
          defaultOutputModes: ["text/plain"],
          skills: [],
        }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { id } = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id: string | number };
    const answer = writeHugeAnswer(res, {
      contentType: "application/json",
      head: `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"kind":"message","messageId":"m-1","role":"agent","parts":[{"kind":"text","text":"`,
      tail: '"}]}}',
      fillBytes,
    });
    answers.push(answer.record);
    await answer.done;
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  return {
    url: base,
    answers,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
