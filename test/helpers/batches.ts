import OpenAI, { toFile } from "openai";

import { sweepBatches } from "../../core/features/batches/sweep.ts";
import type { TestGateway } from "./gateway.ts";

/** Helpers of the batch tests: files go through the openai SDK, as a client's would. */

/** The client without its routing headers: a file named with a provider would be copied to that provider too. */
const gatewayOnly = (client: OpenAI) =>
  client.withOptions({
    defaultHeaders: {
      ...((client as unknown as { _options: { defaultHeaders?: Record<string, string> } })._options.defaultHeaders ??
        {}),
      "x-gateway-provider": null,
      "x-gateway-custom-host": null,
      "x-gateway-config": null,
    },
  });

/** Uploads `text` as a file of the client's workspace (kept in the gateway only); its id. */
export async function uploadJsonl(client: OpenAI, text: string, purpose: "batch" | "fine-tune" = "batch") {
  const file = await gatewayOnly(client).files.create({
    file: await toFile(Buffer.from(text), "input.jsonl"),
    purpose,
  });
  return file.id;
}

/** A file's content as text, read through the files API. */
export async function fileText(client: OpenAI, id: string): Promise<string> {
  return (await gatewayOnly(client).files.content(id)).text();
}

/** An openai client of the gateway with a workspace key and routing headers. */
export function gatewayClient(
  gateway: TestGateway,
  gatewayKey: string,
  headers: Record<string, string> = {},
  apiKey = "unused",
): OpenAI {
  return new OpenAI({
    apiKey,
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: { "x-gateway-api-key": gatewayKey, ...headers },
  });
}

/** Drives the queue worker and the sweep (the scheduled task) until the batch is finished; the finished batch. */
export async function runBatchToEnd(gateway: TestGateway, client: OpenAI, id: string) {
  for (let round = 0; round < 50; round++) {
    await gateway.gateway.worker.drain();
    const batch = await client.batches.retrieve(id);
    if (TERMINAL.has(batch.status)) return batch;
    await sweepBatches(gateway.gateway.services, new AbortController().signal);
  }
  throw new Error(`batch ${id} did not finish`);
}

/** Its lines parsed. */
export const parseLines = (text: string) =>
  text
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line));

export const jsonl = (lines: unknown[]) =>
  `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`;

export const chatLine = (customId: string, content: string, model = "gpt-4o-mini") => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, messages: [{ role: "user", content }] },
});

export const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);
