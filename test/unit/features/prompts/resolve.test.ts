import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureOrganisation } from "../../../../core/control/organisation/bootstrap.ts";
import { HttpError } from "../../../../core/http/errors.ts";
import { type LocalStores, createLocalStores } from "../../../../core/platform/local/local-stores.ts";
import { resolvePrompt } from "../../../../core/features/prompts/resolve.ts";
import { adminPrincipal, thrown, unique, workspacePrincipal } from "../../../helpers/control-services.ts";
import { seedLabel, seedPrompt } from "../../../helpers/prompts.ts";

/** Version selection by the path's suffix (core/features/prompts/resolve.ts): none, @latest, @n, @label; 404s. */

let dataDir: string;
let stores: LocalStores;
let organisationId: string;
let workspaceId: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-prompt-resolve-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  ({ organisationId, defaultWorkspaceId: workspaceId } = await ensureOrganisation(stores.records));
});

afterAll(async () => {
  await stores?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const caller = () => workspacePrincipal(organisationId, workspaceId);

async function threePrompt() {
  const staging = await seedLabel(stores.records, { organisationId, workspaceId }, unique("staging"));
  const production = await seedLabel(stores.records, { organisationId }, unique("production"));
  const unused = await seedLabel(stores.records, { organisationId }, unique("unused"));
  const prompt = await seedPrompt(
    stores.records,
    { organisationId, workspaceId },
    {
      slug: unique("support"),
      versions: [{ string: "v1" }, { string: "v2" }, { string: "v3" }],
      defaultVersion: 2,
      labels: { [staging.id]: 3, [production.id]: 1 },
    },
  );
  return { prompt, staging, production, unused };
}

const versionOf = async (reference: string) =>
  (await resolvePrompt(stores.records, caller(), reference)).version.string;

async function notFoundCode(reference: string, principal = caller()) {
  const error = await thrown(resolvePrompt(stores.records, principal, reference));
  expect(error).toBeInstanceOf(HttpError);
  expect((error as HttpError).status).toBe(404);
  return { code: (error as HttpError & { code: string }).code, message: (error as Error).message };
}

describe("prompt version selection", () => {
  it("picks the published version without a suffix, by id or slug", async () => {
    const { prompt } = await threePrompt();
    expect(await versionOf(prompt.id)).toBe("v2");
    expect(await versionOf(prompt.slug!)).toBe("v2");
  });

  it("picks @latest, @n and @label (by name or id)", async () => {
    const { prompt, staging, production } = await threePrompt();
    expect(await versionOf(`${prompt.id}@latest`)).toBe("v3");
    expect(await versionOf(`${prompt.slug}@1`)).toBe("v1");
    expect(await versionOf(`${prompt.id}@${staging.name}`)).toBe("v3");
    expect(await versionOf(`${prompt.id}@${production.id}`)).toBe("v1");
    const resolved = await resolvePrompt(stores.records, caller(), `${prompt.id}@${production.name}`);
    expect(resolved.label?.id).toBe(production.id);
    expect(resolved.version.version).toBe(1);
  });

  it("answers 404 naming an unknown prompt, version or label", async () => {
    const { prompt, unused } = await threePrompt();
    expect(await notFoundCode("pp_doesnotexist")).toMatchObject({ code: "prompt_not_found" });
    const version = await notFoundCode(`${prompt.id}@9`);
    expect(version.code).toBe("version_not_found");
    expect(version.message).toContain("9");
    expect((await notFoundCode(`${prompt.id}@no-such-label`)).code).toBe("label_not_found");
    // A label that exists but points at no version of this prompt.
    expect((await notFoundCode(`${prompt.id}@${unused.name}`)).code).toBe("label_not_found");
  });

  it("hides another workspace's prompt (and its labels) like an unknown one", async () => {
    const { prompt } = await threePrompt();
    const outsider = workspacePrincipal(organisationId, "ws_other_team");
    expect((await notFoundCode(prompt.id, outsider)).code).toBe("prompt_not_found");
    // The organisation's admin key, bound to no workspace, may use it.
    expect((await resolvePrompt(stores.records, adminPrincipal(organisationId), prompt.id)).version.string).toBe("v2");
  });
});
