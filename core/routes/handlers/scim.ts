import { revokeUserKeys } from "../../control/api-keys/service.ts";
import { DomainError } from "../../control/errors.ts";
import type { Handler, HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { apiKeyDeps, controlDeps } from "../control-deps.ts";
import { httpErrorOf } from "../../http/domain-errors.ts";
import { HttpError, badRequest } from "../../http/errors.ts";
import { json, readText } from "../../http/json.ts";
import { SCIM_ERROR_SCHEMA, ScimError } from "../../identity/scim/errors.ts";
import * as groups from "../../identity/scim/groups.ts";
import * as mappings from "../../identity/scim/mappings.ts";
import type { PatchOperation } from "../../identity/scim/patch.ts";
import * as tokens from "../../identity/scim/tokens.ts";
import * as users from "../../identity/scim/users.ts";
import type { ScimDeps } from "../../identity/scim/users.ts";
import * as views from "../../identity/scim/views.ts";

/**
 * SCIM 2.0 (`/scim/v2/Users`, `/scim/v2/Groups`) for identity providers, authenticated by a SCIM token
 * (`Authorization: Bearer`, never an API key) and answered as `application/scim+json` with SCIM's error
 * shape; and the admin side (`/v1/admin/scim/tokens`, `/v1/admin/scim/group-mappings`, spec 4.8's
 * `/v1/scim/workspaces` and `/v1/scim/groups`), authenticated by API key like the rest of the control plane.
 */

const SCIM_CONTENT_TYPE = "application/scim+json";

const scimDeps = (request: Request, ctx: RequestContext): ScimDeps => {
  const base = ctx.services.settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin;
  return {
    ...controlDeps(ctx),
    baseUrl: `${base.replace(/\/+$/, "")}/scim/v2`,
    revokeUserKeys: (organisationId, userId) => revokeUserKeys(apiKeyDeps(ctx), organisationId, userId),
  };
};

function scimJson(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": SCIM_CONTENT_TYPE } });
}

function scimErrorResponse(error: unknown): Response {
  let status = 500;
  let detail = "Internal error.";
  let scimType: string | null = null;
  if (error instanceof ScimError) ({ status, message: detail, scimType } = error);
  else if (error instanceof DomainError) ({ status, message: detail } = httpErrorOf(error));
  else if (error instanceof HttpError) ({ status, message: detail } = error);
  const headers: Record<string, string> = { "content-type": SCIM_CONTENT_TYPE };
  if (status === 401) headers["www-authenticate"] = 'Bearer realm="scim"';
  // SCIM's error (RFC 7644 3.12) for provisioning clients, with the gateway's OpenAI-shaped `error` beside it.
  const error_ = {
    message: detail,
    type: status === 401 ? "authentication_error" : status === 403 ? "permission_error" : "invalid_request_error",
    param: null,
    code: scimType,
  };
  return new Response(
    JSON.stringify({
      schemas: [SCIM_ERROR_SCHEMA],
      status: String(status),
      detail,
      ...(scimType ? { scimType } : {}),
      error: error_,
    }),
    { status, headers },
  );
}

/** A SCIM route: the SCIM token authenticates (API keys are not SCIM tokens), errors answer in SCIM's shape. */
const scimRoute =
  (run: (request: Request, ctx: RequestContext, deps: ScimDeps) => Promise<Response>): Handler =>
  async (request, ctx) => {
    try {
      const deps = scimDeps(request, ctx);
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
      const principal = await tokens.authenticateScimToken(deps, match?.[1]);
      return await run(request, { ...ctx, principal }, deps);
    } catch (error) {
      return scimErrorResponse(error);
    }
  };

async function readScimBody(request: Request, ctx: RequestContext): Promise<unknown> {
  const text = await readText(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  try {
    return JSON.parse(text);
  } catch {
    throw new ScimError(400, "The request body is not valid JSON.", "invalidSyntax");
  }
}

async function readOperations(request: Request, ctx: RequestContext): Promise<PatchOperation[]> {
  const body = (await readScimBody(request, ctx)) as { Operations?: unknown; operations?: unknown } | null;
  const operations = body?.Operations ?? body?.operations;
  if (!Array.isArray(operations) || operations.some((op) => !op || typeof op !== "object"))
    throw new ScimError(400, "'Operations' must be an array of operations.", "invalidSyntax");
  return operations as PatchOperation[];
}

function listQuery(request: Request) {
  const params = new URL(request.url).searchParams;
  const number = (name: string) => {
    const raw = params.get(name);
    if (raw === null || raw === "") return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value)) throw new ScimError(400, `'${name}' must be a number.`, "invalidValue");
    return value;
  };
  return {
    filter: params.get("filter") ?? undefined,
    startIndex: number("startIndex"),
    count: number("count"),
    excludedAttributes: params.get("excludedAttributes") ?? undefined,
  };
}

function pageQuery(request: Request) {
  const params = new URL(request.url).searchParams;
  const read = (name: string, fallback: number, min: number, max: number) => {
    const raw = params.get(name);
    if (raw === null || raw === "") return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max)
      throw badRequest(`'${name}' must be an integer from ${min} to ${max}.`, name);
    return value;
  };
  return { page: read("page", 0, 0, 1_000_000), pageSize: read("page_size", 50, 1, 100) };
}

async function readAdminBody(request: Request, ctx: RequestContext): Promise<Record<string, unknown>> {
  const text = await readText(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  if (text.trim() === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw badRequest("The request body is not valid JSON.", null, "invalid_json");
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) throw badRequest("The body must be a JSON object.");
  return body as Record<string, unknown>;
}

export const handlers: HandlerMap = {
  // --- SCIM 2.0 Users ------------------------------------------------------------------------------------
  scimListUsers: scimRoute(async (request, ctx, deps) =>
    scimJson(await users.listScimUsers(deps, ctx.principal!, listQuery(request))),
  ),
  scimCreateUser: scimRoute(async (request, ctx, deps) =>
    scimJson(await users.createScimUser(deps, ctx.principal!, await readScimBody(request, ctx)), 201),
  ),
  scimGetUser: scimRoute(async (_request, ctx, deps) =>
    scimJson(await users.getScimUser(deps, ctx.principal!, ctx.params.id!)),
  ),
  scimReplaceUser: scimRoute(async (request, ctx, deps) =>
    scimJson(await users.replaceScimUser(deps, ctx.principal!, ctx.params.id!, await readScimBody(request, ctx))),
  ),
  scimPatchUser: scimRoute(async (request, ctx, deps) =>
    scimJson(await users.patchScimUser(deps, ctx.principal!, ctx.params.id!, await readOperations(request, ctx))),
  ),
  scimDeleteUser: scimRoute(async (_request, ctx, deps) => {
    await users.deleteScimUser(deps, ctx.principal!, ctx.params.id!);
    return new Response(null, { status: 204 });
  }),

  // --- SCIM 2.0 Groups -----------------------------------------------------------------------------------
  scimListGroups: scimRoute(async (request, ctx, deps) =>
    scimJson(await groups.listScimGroups(deps, ctx.principal!, listQuery(request))),
  ),
  scimCreateGroup: scimRoute(async (request, ctx, deps) =>
    scimJson(await groups.createScimGroup(deps, ctx.principal!, await readScimBody(request, ctx)), 201),
  ),
  scimGetGroup: scimRoute(async (request, ctx, deps) =>
    scimJson(await groups.getScimGroup(deps, ctx.principal!, ctx.params.id!, listQuery(request).excludedAttributes)),
  ),
  scimReplaceGroup: scimRoute(async (request, ctx, deps) =>
    scimJson(await groups.replaceScimGroup(deps, ctx.principal!, ctx.params.id!, await readScimBody(request, ctx))),
  ),
  scimPatchGroup: scimRoute(async (request, ctx, deps) =>
    scimJson(await groups.patchScimGroup(deps, ctx.principal!, ctx.params.id!, await readOperations(request, ctx))),
  ),
  scimDeleteGroup: scimRoute(async (_request, ctx, deps) => {
    await groups.deleteScimGroup(deps, ctx.principal!, ctx.params.id!);
    return new Response(null, { status: 204 });
  }),

  // --- admin: tokens and group mappings ------------------------------------------------------------------
  async createScimToken(request, ctx) {
    const body = await readAdminBody(request, ctx);
    if (body.name !== undefined && typeof body.name !== "string") throw badRequest("'name' must be a string.", "name");
    const created = await tokens.createScimToken(controlDeps(ctx), ctx.principal!, { name: body.name as string });
    return json({ ...created.token, token: created.secret }, { status: 201 });
  },
  async listScimTokens(_request, ctx) {
    const data = await tokens.listScimTokens(controlDeps(ctx), ctx.principal!);
    return json({ object: "list", data, total: data.length });
  },
  async revokeScimToken(_request, ctx) {
    const token = await tokens.revokeScimToken(controlDeps(ctx), ctx.principal!, { id: ctx.params.id! });
    return json({ ...token, deleted: true });
  },
  async createScimGroupMapping(request, ctx) {
    const body = await readAdminBody(request, ctx);
    return json(await mappings.createMapping(controlDeps(ctx), ctx.principal!, body), { status: 201 });
  },
  async listScimGroupMappings(_request, ctx) {
    const data = await mappings.listMappings(controlDeps(ctx), ctx.principal!);
    return json({ object: "list", data, total: data.length });
  },
  async getScimGroupMapping(_request, ctx) {
    return json(await mappings.getMapping(controlDeps(ctx), ctx.principal!, ctx.params.id!));
  },
  async deleteScimGroupMapping(_request, ctx) {
    await mappings.deleteMapping(controlDeps(ctx), ctx.principal!, ctx.params.id!);
    return json({ id: ctx.params.id, object: "scim_group_mapping", deleted: true });
  },

  // --- spec 4.8 ------------------------------------------------------------------------------------------
  async scimWorkspaces(request, ctx) {
    return json(await views.scimWorkspaces(controlDeps(ctx), ctx.principal!, pageQuery(request)));
  },
  async scimGroupsSearch(request, ctx) {
    const search = new URL(request.url).searchParams.get("search") ?? undefined;
    return json(await views.scimGroupsSearch(controlDeps(ctx), ctx.principal!, { ...pageQuery(request), search }));
  },
  async scimUnmapWorkspaceGroup(_request, ctx) {
    await mappings.unmapGroupFromWorkspace(controlDeps(ctx), ctx.principal!, {
      workspace: ctx.params.id!,
      group: ctx.params.groupId!,
    });
    return json({ success: true });
  },
};
