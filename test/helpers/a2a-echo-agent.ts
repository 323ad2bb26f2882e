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
  validateVersion,
} from "@a2a-js/sdk/server";
import type { AgentCard } from "@a2a-js/sdk";

/**
 * A real A2A agent for tests, built from the A2A SDK's server pieces on node:http: it echoes the user's text as
 * a message, or, for text starting with "task", runs a task (submitted, working, completed with the echo as its
 * status message) so streams carry several events; text starting with "slow" runs a task that stays working
 * until it is cancelled (or 10 s pass). Serves its card at /.well-known/agent-card.json and JSON-RPC at /a2a,
 * 1.0 or 0.3 by the A2A-Version header (absent = 0.3), checked against the card's interfaces as the SDK's
 * express handler does. The card is one of three shapes (`cardShape`):
 * - "1.0": what the current SDK serves, an `AgentCard` with `supportedInterfaces` and no top-level `url`;
 * - "0.3": a 0.3 card (`url`, `preferredTransport`, `protocolVersion: "0.3.0"`), the agent speaking 0.3 only;
 * - "both" (default): 0.3 fields plus 1.0 interfaces.
 */

export interface EchoAgent {
  url: string;
  /** Headers of every request it received. */
  requests: Array<{ method: string; path: string; headers: IncomingHttpHeaders; body?: string }>;
  card: Record<string, unknown>;
  /** Replaces the card served from now on (what a re-discovery would read). */
  serveCard(card: Record<string, unknown>): void;
  close(): Promise<void>;
}

export type CardShape = "1.0" | "0.3" | "both";

/** Slow tasks waiting for their cancellation, by task id. */
const slowTasks = new Map<string, () => void>();

const textOf = (message: Message | undefined) =>
  (message?.parts ?? []).map((part) => (part.content?.$case === "text" ? part.content.value : "")).join("");

export const echoExecutor: AgentExecutor = {
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
    if (text.startsWith("slow")) {
      await runSlowTask(context, bus);
      return;
    }
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
  async cancelTask(taskId, bus) {
    slowTasks.get(taskId)?.();
    bus.publish(
      AgentEvent.statusUpdate(
        TaskStatusUpdateEvent.fromJSON({ taskId, contextId: "", status: { state: "TASK_STATE_CANCELED" } }),
      ),
    );
    bus.finished();
  },
};

/** A task that stays `working` until cancelled (or 10 s pass), for tasks/cancel through the gateway. */
async function runSlowTask(
  context: Parameters<AgentExecutor["execute"]>[0],
  bus: Parameters<AgentExecutor["execute"]>[1],
) {
  bus.publish(
    AgentEvent.task(
      Task.fromJSON({
        id: context.taskId,
        contextId: context.contextId,
        status: { state: "TASK_STATE_WORKING" },
        history: [Message.toJSON(context.userMessage)],
      }),
    ),
  );
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, 10_000);
    slowTasks.set(context.taskId, () => {
      clearTimeout(timer);
      resolve();
    });
  });
  slowTasks.delete(context.taskId);
}

export async function startEchoAgent(
  options: { cardOverride?: Record<string, unknown>; cardShape?: CardShape } = {},
): Promise<EchoAgent> {
  const requests: EchoAgent["requests"] = [];
  let card: Record<string, unknown> = {};
  const shape = options.cardShape ?? "both";
  // The versions the agent answers, as its card's interfaces say (the SDK's handlers check A2A-Version so).
  const versionCard = {
    supportedInterfaces: (shape === "both" ? ["1.0", "0.3"] : [shape]).map((protocolVersion) => ({
      url: "",
      protocolBinding: "JSONRPC",
      protocolVersion,
      tenant: "",
    })),
  } as unknown as AgentCard;
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
    requests[requests.length - 1]!.body = body;
    try {
      validateVersion(version, versionCard, "JSONRPC");
    } catch (error) {
      const mapped = useLegacy
        ? LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(error)
        : JsonRpcTransportHandler.mapToJSONRPCError(error);
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: JSON.parse(body).id ?? null, error: mapped }));
      return;
    }
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
  card = options.cardOverride ?? cardOf(shape, url);
  return {
    url,
    requests,
    card,
    serveCard(next) {
      card = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An AgentCard as the current SDK's types define it, with the given name and interfaces. */
export function sdkAgentCard(name: string, supportedInterfaces: AgentCard["supportedInterfaces"]): AgentCard {
  return {
    name,
    description: "Echoes what it is sent.",
    version: "1.0.0",
    supportedInterfaces,
    provider: undefined,
    documentationUrl: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "echo",
        name: "Echo",
        description: "Echoes",
        tags: ["echo"],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
    iconUrl: undefined,
  };
}

function cardOf(shape: CardShape, url: string): Record<string, unknown> {
  if (shape === "1.0") {
    // An AgentCard as the current SDK's types define it, served as its agentCardHandler serves one (JSON.stringify).
    const sdkCard = sdkAgentCard("Echo agent 1.0", [
      { url: `${url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0", tenant: "" },
    ]);
    return JSON.parse(JSON.stringify(sdkCard));
  }
  const legacyCard = {
    name: "Echo agent 0.3",
    description: "Echoes what it is sent.",
    version: "0.3.0",
    url: `${url}/a2a`,
    preferredTransport: "JSONRPC",
    protocolVersion: "0.3.0",
    capabilities: { streaming: true },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }],
  };
  if (shape === "0.3") return legacyCard;
  return {
    ...legacyCard,
    name: "Echo agent",
    version: "1.0.0",
    securitySchemes: { upstreamKey: { type: "apiKey", in: "header", name: "x-upstream-key" } },
    security: [{ upstreamKey: [] }],
    supportedInterfaces: [
      { url: `${url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: `${url}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    ],
  };
}
