import { existsSync } from "node:fs";
import type OpenAI from "openai";
import { toFile } from "openai";
import type { ResourceOwner } from "../../core/auth/resource-owner.ts";
import { fileStoreOf } from "../../core/files/file-store.ts";
import type { Services } from "../../core/services.ts";

/**
 * Helpers of the batch tests. Files go through the openai SDK when the files family's routes are built, else
 * straight into the file store (the same store the routes use).
 */

/** Whether the real files routes are mounted (the files branch has landed). */
export const filesRoutesMounted = () => existsSync(new URL("../../core/routes/handlers/files.ts", import.meta.url));

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

export async function uploadJsonl(
  client: OpenAI,
  services: Services,
  owner: ResourceOwner,
  text: string,
  purpose: "batch" | "fine-tune" = "batch",
  viaApi = filesRoutesMounted(),
): Promise<string> {
  if (viaApi) {
    const file = await gatewayOnly(client).files.create({
      file: await toFile(Buffer.from(text), "input.jsonl"),
      purpose,
    });
    return file.id;
  }
  const stored = await fileStoreOf(services).create(owner, { filename: "input.jsonl", purpose, body: text });
  return stored.file.id;
}

export async function fileText(
  client: OpenAI,
  services: Services,
  owner: ResourceOwner,
  id: string,
  viaApi = filesRoutesMounted(),
): Promise<string> {
  if (viaApi) return (await gatewayOnly(client).files.content(id)).text();
  const opened = await fileStoreOf(services).content(owner, id);
  if (!opened) throw new Error(`no file ${id}`);
  return new Response(opened.body).text();
}

export const jsonl = (lines: unknown[]) =>
  `${lines.map((line) => (typeof line === "string" ? line : JSON.stringify(line))).join("\n")}\n`;

export const chatLine = (customId: string, content: string, model = "gpt-4o-mini") => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, messages: [{ role: "user", content }] },
});

export const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);
