import type { AddressInfo } from "node:net";
import type { AgentCard } from "@a2a-js/sdk";
import { DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { UserBuilder, agentCardHandler, jsonRpcHandler, restHandler } from "@a2a-js/sdk/server/express";
import express from "express";
import { echoExecutor, sdkAgentCard } from "./a2a-echo-agent.ts";

/**
 * An A2A agent served entirely by the current `@a2a-js/sdk`'s own express handlers (agentCardHandler,
 * restHandler, jsonRpcHandler) over the echo executor of a2a-echo-agent.ts: a 1.0 card listing the bindings
 * asked for (`HTTP+JSON` at /rest, `JSONRPC` at /jsonrpc), each handler enforcing the A2A-Version its card
 * declares. Records each request's method, path and A2A-Version header.
 */
export interface SdkAgent {
  url: string;
  card: AgentCard;
  requests: Array<{ method: string; path: string; version: string | undefined }>;
  close(): Promise<void>;
}

export async function startSdkAgent(bindings: Array<"HTTP+JSON" | "JSONRPC">): Promise<SdkAgent> {
  const requests: SdkAgent["requests"] = [];
  const app = express();
  app.use((req, _res, next) => {
    requests.push({ method: req.method, path: req.path, version: req.header("a2a-version") ?? undefined });
    next();
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const card = sdkAgentCard(
    "SDK echo agent",
    bindings.map((protocolBinding) => ({
      url: `${url}/${protocolBinding === "HTTP+JSON" ? "rest" : "jsonrpc"}`,
      protocolBinding,
      protocolVersion: "1.0",
      tenant: "",
    })),
  );
  const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), echoExecutor);
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: async () => card }));
  app.use("/rest", restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  app.use("/jsonrpc", jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
  return {
    url,
    card,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
