import { randomUUID } from "node:crypto";
import { type IncomingHttpHeaders, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Message, SSE_HEADERS, Task, TaskStatusUpdateEvent, formatSSEEvent } from "@a2a-js/sdk";
import { LegacyJsonRpcTransportHandler } from "@a2a-js/sdk/compat/v0_3/server";
import {
  type AgentExecutor,
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
  JsonRpcTransportHandler,
  ServerCallContext,
} from "@a2a-js/sdk/server";

/**
 * A real A2A agent for tests, built from the A2A SDK's server pieces on node:http: it echoes the user's text as
 * a message, or, for text starting with "task", runs a task (submitted, working, completed with the echo as its
 * status message) so streams carry several events. Serves its card at /.well-known/agent-card.json (A2A 0.3
 * fields plus 1.0 interfaces) and JSON-RPC at /a2a, 1.0 or 0.3 by the A2A-Version header, as the SDK's servers do.
 */

export interface EchoAgent {
  url: string;
  /** Headers of every request it received. */
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders }>;
  card: Record<string, unknown>;
  close(): Promise<void>;
}

const textOf = (message: Message | undefined) =>
  (message?.parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");

const echoExecutor: AgentExecutor = {
  async execute(context, bus) {
    const text = textOf(context.userMessage);
    const reply = (taskId?: string) =>
      Message.fromJSON({
        messageId: randomUUID(),
        contextId: context.contextId,
        ...(taskId ? { taskId } : {}),
        role: "ROLE_AGENT",
        parts: [{ text: `echo: ${text}` }],
      });
    if (!text.startsWith("task")) {
      bus.publish(AgentEvent.message(reply()));
      bus.finished();
      return;
    }
    const status = (state: string, message?: Message) =>
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({
          taskId: context.taskId,
          contextId: context.contextId,
          status: { state, ...(message ? { message: Message.toJSON(message) } : {}) },
        }),
      );
    bus.publish(
      AgentEvent.task(
        Task.fromJSON({
          id: context.taskId,
          contextId: context.contextId,
          status: { state: "TASK_STATE_SUBMITTED" },
          history: [Message.toJSON(context.userMessage)],
        }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    bus.publish(status("TASK_STATE_WORKING"));
    await new Promise((resolve) => setTimeout(resolve, 20));
    bus.publish(status("TASK_STATE_COMPLETED", reply(context.taskId)));
    bus.finished();
  },
  async cancelTask() {},
};

export async function startEchoAgent(options: { cardOverride?: Record<string, unknown> } = {}): Promise<EchoAgent> {
  const requests: EchoAgent["requests"] = [];
  let card: Record<string, unknown> = {};
  const handler = new DefaultRequestHandler(
    // The server-side handler reads only what it needs of the card; the one served is the JSON below.
    { name: "Echo", supportedInterfaces: [], capabilities: { streaming: true } } as never,
    new InMemoryTaskStore(),
    echoExecutor,
  );
  const v1 = new JsonRpcTransportHandler(handler);
  const legacy = new LegacyJsonRpcTransportHandler(handler);
  const server = createServer(async (req, res) => {
    requests.push({ method: req.method ?? "GET", path: req.url ?? "/", headers: req.headers });
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(card));
      return;
    }
    if (req.method !== "POST" || req.url !== "/a2a") {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const version = String(req.headers["a2a-version"] ?? "0.3");
    const useLegacy = version.startsWith("0.");
    const context = new ServerCallContext({ requestedVersion: version });
    const body = Buffer.concat(chunks).toString("utf8");
    const answer = useLegacy ? await legacy.handle(body, context) : await v1.handle(body, context);
    if (typeof (answer as AsyncGenerator)[Symbol.asyncIterator] === "function") {
      res.writeHead(200, SSE_HEADERS);
      for await (const event of answer as AsyncGenerator) res.write(formatSSEEvent(event));
      res.end();
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify(answer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  card = options.cardOverride ?? {
    name: "Echo agent",
    description: "Echoes what it is sent.",
    version: "1.0.0",
    url: `${url}/a2a`,
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3.0",
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }],
    securitySchemes: { upstreamKey: { type: "apiKey", in: "header", name: "x-upstream-key" } },
    security: [{ upstreamKey: [] }],
    supportedInterfaces: [
      { url: `${url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ],
  };
  return {
    url,
    requests,
    card,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
