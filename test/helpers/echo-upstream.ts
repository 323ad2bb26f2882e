import type { RecordedRequest } from "./mock-server.ts";
import { openAIError, type OpenAIMockOptions } from "../mocks/openai.ts";

/**
 * A guard for the OpenAI mock (test/mocks/openai.ts) that answers chat completions with `echo: <last user text>`,
 * so a batch's output shows which line each answer belongs to; a message `FAIL` gets OpenAI's 400 error.
 */
export const echoChat: NonNullable<OpenAIMockOptions["guard"]> = (request: RecordedRequest) => {
  if (!request.path.split("?")[0]!.endsWith("/chat/completions")) return undefined;
  const body = request.json();
  const text = String(body.messages?.at(-1)?.content ?? "");
  if (text === "FAIL") return { status: 400, body: openAIError(400, "the mock refuses FAIL") };
  return {
    status: 200,
    body: {
      id: "chatcmpl-echo",
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: `echo: ${text}`, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 },
    },
  };
};
