import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { loadSettings, type Settings } from "../../../../core/config/settings.ts";
import { createLocalStores } from "../../../../core/platform/local/local-stores.ts";
import type { ResponseOwner } from "../../../../core/features/responses/owner.ts";
import type { StoredResponse } from "../../../../core/features/responses/response-store.ts";
import type { Stores } from "../../../../core/store/ports.ts";

/** Local stores (SQLite + folder) in a temp dir for one test file, and the services the responses code reads. */
export function localResponseServices(): () => { stores: Stores; settings: Settings } {
  let dataDir: string;
  let services: { stores: Stores; settings: Settings };
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), "responses-"));
    services = {
      stores: createLocalStores({ dataDir, publicBaseUrl: "http://localhost" }),
      settings: loadSettings({}),
    };
  });
  afterAll(async () => {
    await services?.stores.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return () => services;
}

export const newOwner = (): ResponseOwner => ({
  organisationId: `org_${randomUUID().slice(0, 8)}`,
  workspaceId: `ws_${randomUUID().slice(0, 8)}`,
});

export const newResponseId = () => `resp_${randomUUID().replaceAll("-", "")}`;

/** A stored response as the create handler would save it (internal 2026 shape). */
export function storedResponse(
  fields: Record<string, any> = {},
  inputItems: Record<string, any>[] = [],
  context: Record<string, any>[] = inputItems,
): StoredResponse {
  return {
    response: {
      id: newResponseId(),
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      background: false,
      model: "gpt-4o-mini",
      instructions: null,
      output: [],
      error: null,
      ...fields,
    },
    inputItems,
    context,
    provider: "openai",
    native: false,
  };
}
