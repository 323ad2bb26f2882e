import type { RouteFamily, RouteSpec } from "../../http/route-types.ts";

/** Create, list, read, update and delete of one saved-prompt resource at `path`; handler names spelled out. */
function crudRoutes(
  path: string,
  scope: string,
  handler: Record<"create" | "list" | "get" | "update" | "remove", string>,
): RouteSpec[] {
  return [
    { method: "POST", path, handler: handler.create, auth: "api_key", body: "json", scope: `${scope}.create` },
    { method: "GET", path, handler: handler.list, auth: "api_key", scope: `${scope}.list` },
    { method: "GET", path: `${path}/:id`, handler: handler.get, auth: "api_key", scope: `${scope}.read` },
    {
      method: "PUT",
      path: `${path}/:id`,
      handler: handler.update,
      auth: "api_key",
      body: "json",
      scope: `${scope}.update`,
    },
    { method: "DELETE", path: `${path}/:id`, handler: handler.remove, auth: "api_key", scope: `${scope}.delete` },
  ];
}

/** Spec 4.8: share with other workspaces, stop sharing (`<scope>.share`), fork into a workspace (`<scope>.create`). */
function sharingRoutes(
  path: string,
  scope: string,
  handler: Record<"share" | "unshare" | "fork", string>,
): RouteSpec[] {
  const route = (action: string, name: string, needs: string): RouteSpec => ({
    method: "POST",
    path: `${path}/:id/${action}`,
    handler: name,
    auth: "api_key",
    body: "json",
    scope: needs,
  });
  return [
    route("share", handler.share, `${scope}.share`),
    route("unshare", handler.unshare, `${scope}.share`),
    route("fork", handler.fork, `${scope}.create`),
  ];
}

/**
 * Saved prompts (core/control/prompts/service.ts) with versions and labels, partials, labels, collections
 * and sharing. `/v1/prompts/partials` is listed before `/v1/prompts/:id` so that it never reads as a
 * prompt's slug (and no prompt may take the slug `partials`). The prompt runtime (render, completions)
 * belongs to this family too: `:id` then carries an optional version suffix (`@latest`, `@<n>`,
 * `@<label>`); rendering reads the prompt (`prompts.read`), running it is inference, open to any key like
 * v1/chat/completions, counted in analytics and allowed a stream's time. Never forwarded raw to a provider.
 */
export const family: RouteFamily = {
  name: "prompts",
  dataPlane: false,
  timeoutSeconds: 900,
  routes: [
    {
      method: "POST",
      path: "/v1/prompts/:id/render",
      handler: "renderPrompt",
      auth: "api_key",
      body: "json",
      scope: "prompts.read",
    },
    {
      method: "POST",
      path: "/v1/prompts/:id/completions",
      handler: "promptCompletions",
      auth: "api_key",
      body: "json",
      inference: true,
    },
    {
      method: "POST",
      path: "/v1/prompts/:id/generate",
      handler: "generatePrompt",
      auth: "api_key",
      body: "json",
      inference: true,
    },
    ...crudRoutes("/v1/prompts/partials", "prompt_partials", {
      create: "createPartial",
      list: "listPartials",
      get: "getPartial",
      update: "updatePartial",
      remove: "deletePartial",
    }),
    {
      method: "PUT",
      path: "/v1/prompts/partials/:id/makeDefault",
      handler: "publishPartial",
      auth: "api_key",
      body: "json",
      scope: "prompt_partials.publish",
    },
    {
      method: "GET",
      path: "/v1/prompts/partials/:id/versions",
      handler: "listPartialVersions",
      auth: "api_key",
      scope: "prompt_partials.read",
    },
    ...crudRoutes("/v1/prompts", "prompts", {
      create: "createPrompt",
      list: "listPrompts",
      get: "getPrompt",
      update: "updatePrompt",
      remove: "deletePrompt",
    }),
    {
      method: "PUT",
      path: "/v1/prompts/:id/makeDefault",
      handler: "publishPrompt",
      auth: "api_key",
      body: "json",
      scope: "prompts.publish",
    },
    {
      method: "GET",
      path: "/v1/prompts/:id/versions",
      handler: "listPromptVersions",
      auth: "api_key",
      scope: "prompts.read",
    },
    {
      method: "GET",
      path: "/v1/prompts/:id/versions/:versionId",
      handler: "getPromptVersion",
      auth: "api_key",
      scope: "prompts.read",
    },
    {
      method: "PUT",
      path: "/v1/prompts/:id/versions/:versionId",
      handler: "updatePromptVersion",
      auth: "api_key",
      body: "json",
      scope: "prompts.update",
    },
    ...crudRoutes("/v1/labels", "labels", {
      create: "createLabel",
      list: "listLabels",
      get: "getLabel",
      update: "updateLabel",
      remove: "deleteLabel",
    }),
    ...crudRoutes("/v1/collections", "prompt_collections", {
      create: "createCollection",
      list: "listCollections",
      get: "getCollection",
      update: "updateCollection",
      remove: "deleteCollection",
    }),
    ...sharingRoutes("/v2/prompts/partials", "prompt_partials", {
      share: "sharePartial",
      unshare: "unsharePartial",
      fork: "forkPartial",
    }),
    ...sharingRoutes("/v2/prompts", "prompts", {
      share: "sharePrompt",
      unshare: "unsharePrompt",
      fork: "forkPrompt",
    }),
  ],
};
