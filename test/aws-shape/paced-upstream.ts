import type { ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * An OpenAI-shaped upstream whose timing a test sets in the request itself, for what only time shows (read
 * timeouts, redeliveries, cancels). The last user message of a chat completion picks it:
 *   `wait <ms> ...`          the JSON answer comes after <ms>
 *   `drip <n> <ms> ...`      a stream of <n> chunks, one every <ms> (also without `stream`, as SSE)
 *   anything else            answered at once: `echo: <message>`
 * `POST /v1/responses` never answers: it holds the request until the gateway lets go of it (a background run
 * cancelled), which `closed` records.
 */
export interface PacedUpstream extends MockServer {
  /** The chat messages received, in order. */
  messages(): string[];
  /** How many /v1/responses requests the gateway closed before an answer. */
  closed: number;
}

const completion = (content: string, model: string) => ({
  id: "chatcmpl-paced",
  object: "chat.completion",
  created: 1_700_000_000,
  model,
  choices: [{ index: 0, message: { role: "assistant", content }, logprobs: null, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
});

const chunk = (content: string, model: string) =>
  `data: ${JSON.stringify({ id: "chatcmpl-paced", object: "chat.completion.chunk", created: 1, model, choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;

export async function startPacedUpstream(): Promise<PacedUpstream> {
  const state = { closed: 0 };
  const server = await startMockServer(async (request, response) => {
    if (request.path.startsWith("/v1/responses")) return hold(response, state);
    const body = request.json();
    const model = String(body.model ?? "m");
    const text = String(body.messages?.at(-1)?.content ?? "");
    const [verb, first, second] = text.split(" ");
    if (verb === "wait") {
      await sleep(Number(first));
      return sendJson(response, 200, completion(`echo: ${text}`, model));
    }
    if (verb === "drip") return drip(response, model, Number(first), Number(second));
    sendJson(response, 200, completion(`echo: ${text}`, model));
  });
  // A getter, not a copied value: `closed` changes after the mock is returned.
  return Object.defineProperties(server, {
    messages: {
      value: () => server.requests.filter(isChat).map((request) => String(request.json().messages?.at(-1)?.content)),
    },
    closed: { get: () => state.closed },
  }) as PacedUpstream;
}

const isChat = (request: RecordedRequest) => request.path.endsWith("/chat/completions");

async function drip(response: ServerResponse, model: string, count: number, everyMs: number): Promise<void> {
  response.writeHead(200, { "content-type": "text/event-stream" });
  for (let index = 0; index < count; index++) {
    response.write(chunk(`${index} `, model));
    await sleep(everyMs);
  }
  response.end("data: [DONE]\n\n");
}

function hold(response: ServerResponse, state: { closed: number }): Promise<void> {
  return new Promise((resolve) => {
    response.once("close", () => {
      state.closed++;
      resolve();
    });
  });
}
