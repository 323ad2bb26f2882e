/**
 * THE route table: route family -> routes. The local server mounts every family, infra/api.ts creates one
 * Lambda function per family and routes its paths to it, and tests check both. Nothing else lists routes.
 * Pure data, so infra and tests can read it without loading any handler code.
 */

import type { Method, RouteFamily, RouteSpec } from "../http/route-types.ts";

export type { Method, RouteFamily, RouteSpec } from "../http/route-types.ts";

const PASSTHROUGH_METHODS = ["POST", "GET", "PUT", "DELETE"] as const;

/** The six routes of one policy kind at `path`; handler names spelled out so they can be grepped. */
function policyRoutes(
  path: string,
  handler: Record<"create" | "list" | "get" | "update" | "remove" | "usage", string>,
): RouteSpec[] {
  return [
    { method: "POST", path, handler: handler.create, auth: "api_key", body: "json", scope: "policies.create" },
    { method: "GET", path, handler: handler.list, auth: "api_key", scope: "policies.list" },
    { method: "GET", path: `${path}/:id`, handler: handler.get, auth: "api_key", scope: "policies.read" },
    {
      method: "PUT",
      path: `${path}/:id`,
      handler: handler.update,
      auth: "api_key",
      body: "json",
      scope: "policies.update",
    },
    { method: "DELETE", path: `${path}/:id`, handler: handler.remove, auth: "api_key", scope: "policies.delete" },
    { method: "GET", path: `${path}/:id/usage`, handler: handler.usage, auth: "api_key", scope: "policies.read" },
  ];
}

/** Assistants API routes from `[method, path, handler]` rows: API-key auth, JSON bodies on POST. */
function assistantsRoutes(rows: Array<[Method, string, string]>): RouteSpec[] {
  return rows.map(([method, path, handler]) =>
    method === "POST"
      ? { method, path, handler, auth: "api_key", body: "json" }
      : { method, path, handler, auth: "api_key" },
  );
}

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

export const ROUTE_FAMILIES: RouteFamily[] = [
  {
    name: "health",
    dataPlane: false,
    timeoutSeconds: 10,
    routes: [
      { method: "GET", path: "/health", handler: "health", auth: "none" },
      { method: "GET", path: "/v1/health", handler: "health", auth: "none" },
      // The API's description (core/routes/openapi), public like the health check; generated from this table.
      { method: "GET", path: "/v1/openapi.json", handler: "openApi", auth: "none" },
    ],
  },
  {
    // The web console (console/, issue 29): its built static files, public like any web page (it signs in
    // through the API). Served by the local gateway; on AWS the Router serves them from a bucket.
    name: "console",
    dataPlane: false,
    timeoutSeconds: 10,
    platform: "static",
    routes: [
      { method: "GET", path: "/", handler: "consoleFile", auth: "none" },
      { method: "GET", path: "/assets/*", handler: "consoleFile", auth: "none" },
    ],
  },
  {
    // Self-hosted gateway deployments (issue 28): organisation admins register and delete them; a deployment
    // posts heartbeats with its own key (scope deployments.heartbeat), `self` naming its own deployment.
    name: "deployments",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/deployments",
        handler: "registerDeployment",
        auth: "api_key",
        body: "json",
        scope: "deployments.create",
      },
      {
        method: "GET",
        path: "/v1/deployments",
        handler: "listDeployments",
        auth: "api_key",
        scope: "deployments.list",
      },
      {
        method: "GET",
        path: "/v1/deployments/:id",
        handler: "getDeployment",
        auth: "api_key",
        scope: "deployments.read",
      },
      {
        method: "POST",
        path: "/v1/deployments/:id/heartbeat",
        handler: "deploymentHeartbeat",
        auth: "api_key",
        body: "json",
        scope: "deployments.heartbeat",
      },
      {
        method: "DELETE",
        path: "/v1/deployments/:id",
        handler: "deleteDeployment",
        auth: "api_key",
        scope: "deployments.delete",
      },
    ],
  },
  {
    name: "chat",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      { method: "POST", path: "/v1/chat/completions", handler: "chatCompletions", auth: "api_key", body: "json" },
    ],
  },
  {
    // OpenAI's Responses API on every provider (core/inference/formats/responses, core/features/responses): native on OpenAI and
    // Azure OpenAI, translated to chat for the rest; stored responses belong to the workspace that made them.
    name: "responses",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      { method: "POST", path: "/v1/responses", handler: "createResponse", auth: "api_key", body: "json" },
      { method: "GET", path: "/v1/responses/:id", handler: "getResponse", auth: "api_key" },
      { method: "DELETE", path: "/v1/responses/:id", handler: "deleteResponse", auth: "api_key" },
      { method: "GET", path: "/v1/responses/:id/input_items", handler: "listInputItems", auth: "api_key" },
      { method: "POST", path: "/v1/responses/:id/cancel", handler: "cancelResponse", auth: "api_key" },
    ],
  },
  {
    // Anthropic's Messages API on every provider (core/inference/formats/messages): native on Anthropic and on Bedrock and
    // Vertex AI Claude models, translated to chat for the rest.
    name: "messages",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      { method: "POST", path: "/v1/messages", handler: "createMessage", auth: "api_key", body: "json" },
      {
        method: "POST",
        path: "/v1/messages/count_tokens",
        handler: "countMessageTokens",
        auth: "api_key",
        body: "json",
      },
    ],
  },
  {
    name: "completions",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [{ method: "POST", path: "/v1/completions", handler: "completions", auth: "api_key", body: "json" }],
  },
  {
    name: "embeddings",
    dataPlane: true,
    timeoutSeconds: 300,
    routes: [{ method: "POST", path: "/v1/embeddings", handler: "embeddings", auth: "api_key", body: "json" }],
  },
  {
    // OpenAI's Images API on every provider that makes images (core/inference/gateway/schemas/images.ts): per-image pricing.
    name: "images",
    dataPlane: true,
    timeoutSeconds: 300,
    routes: [
      { method: "POST", path: "/v1/images/generations", handler: "generateImages", auth: "api_key", body: "json" },
      { method: "POST", path: "/v1/images/edits", handler: "editImages", auth: "api_key", body: "upload" },
      { method: "POST", path: "/v1/images/variations", handler: "imageVariations", auth: "api_key", body: "upload" },
    ],
  },
  {
    // OpenAI's Audio API: speech streamed back as the provider sends it, transcripts in every response_format.
    name: "audio",
    dataPlane: true,
    timeoutSeconds: 600,
    routes: [
      { method: "POST", path: "/v1/audio/speech", handler: "createSpeech", auth: "api_key", body: "json" },
      {
        method: "POST",
        path: "/v1/audio/transcriptions",
        handler: "createTranscription",
        auth: "api_key",
        body: "upload",
      },
      { method: "POST", path: "/v1/audio/translations", handler: "createTranslation", auth: "api_key", body: "upload" },
    ],
  },
  {
    // Spec 4.1, 2.10: the 11 categories of OpenAI's moderation result, whichever provider answers.
    name: "moderations",
    dataPlane: true,
    timeoutSeconds: 60,
    routes: [{ method: "POST", path: "/v1/moderations", handler: "createModeration", auth: "api_key", body: "json" }],
  },
  {
    // Spec 4.1: the provider's rerank answer as received, its usage logged and priced.
    name: "rerank",
    dataPlane: true,
    timeoutSeconds: 60,
    routes: [{ method: "POST", path: "/v1/rerank", handler: "rerank", auth: "api_key", body: "json" }],
  },
  {
    // Spec 4.1: OCR through retries, fallbacks, load balancing, caching, logging and per-page pricing.
    name: "ocr",
    dataPlane: true,
    timeoutSeconds: 300,
    routes: [{ method: "POST", path: "/v1/ocr", handler: "ocr", auth: "api_key", body: "json" }],
  },
  {
    // OpenAI's Assistants API v2 (core/features/assistants): forwarded to OpenAI or Azure OpenAI, objects recorded per
    // workspace (another workspace's ids answer 404, shared lists are filtered), finished runs' usage logged once.
    // `/v1/threads/runs` comes before `/v1/threads/:thread_id` (the router runs the first route that matches).
    name: "assistants",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: assistantsRoutes([
      ["POST", "/v1/assistants", "createAssistant"],
      ["GET", "/v1/assistants", "listAssistants"],
      ["GET", "/v1/assistants/:assistant_id", "getAssistant"],
      ["POST", "/v1/assistants/:assistant_id", "modifyAssistant"],
      ["DELETE", "/v1/assistants/:assistant_id", "deleteAssistant"],
      ["POST", "/v1/threads", "createThread"],
      ["POST", "/v1/threads/runs", "createThreadAndRun"],
      ["GET", "/v1/threads/:thread_id", "getThread"],
      ["POST", "/v1/threads/:thread_id", "modifyThread"],
      ["DELETE", "/v1/threads/:thread_id", "deleteThread"],
      ["POST", "/v1/threads/:thread_id/messages", "createMessage"],
      ["GET", "/v1/threads/:thread_id/messages", "listMessages"],
      ["GET", "/v1/threads/:thread_id/messages/:message_id", "getMessage"],
      ["POST", "/v1/threads/:thread_id/messages/:message_id", "modifyMessage"],
      ["DELETE", "/v1/threads/:thread_id/messages/:message_id", "deleteMessage"],
      ["POST", "/v1/threads/:thread_id/runs", "createRun"],
      ["GET", "/v1/threads/:thread_id/runs", "listRuns"],
      ["GET", "/v1/threads/:thread_id/runs/:run_id", "getRun"],
      ["POST", "/v1/threads/:thread_id/runs/:run_id", "modifyRun"],
      ["POST", "/v1/threads/:thread_id/runs/:run_id/cancel", "cancelRun"],
      ["POST", "/v1/threads/:thread_id/runs/:run_id/submit_tool_outputs", "submitToolOutputs"],
      ["GET", "/v1/threads/:thread_id/runs/:run_id/steps", "listRunSteps"],
      ["GET", "/v1/threads/:thread_id/runs/:run_id/steps/:step_id", "getRunStep"],
      ["POST", "/v1/vector_stores", "createVectorStore"],
      ["GET", "/v1/vector_stores", "listVectorStores"],
      ["GET", "/v1/vector_stores/:vector_store_id", "getVectorStore"],
      ["POST", "/v1/vector_stores/:vector_store_id", "modifyVectorStore"],
      ["DELETE", "/v1/vector_stores/:vector_store_id", "deleteVectorStore"],
      ["POST", "/v1/vector_stores/:vector_store_id/search", "searchVectorStore"],
      ["POST", "/v1/vector_stores/:vector_store_id/files", "createVectorStoreFile"],
      ["GET", "/v1/vector_stores/:vector_store_id/files", "listVectorStoreFiles"],
      ["GET", "/v1/vector_stores/:vector_store_id/files/:file_id", "getVectorStoreFile"],
      ["POST", "/v1/vector_stores/:vector_store_id/files/:file_id", "updateVectorStoreFile"],
      ["DELETE", "/v1/vector_stores/:vector_store_id/files/:file_id", "deleteVectorStoreFile"],
      ["GET", "/v1/vector_stores/:vector_store_id/files/:file_id/content", "vectorStoreFileContent"],
      ["POST", "/v1/vector_stores/:vector_store_id/file_batches", "createFileBatch"],
      ["GET", "/v1/vector_stores/:vector_store_id/file_batches/:batch_id", "getFileBatch"],
      ["POST", "/v1/vector_stores/:vector_store_id/file_batches/:batch_id/cancel", "cancelFileBatch"],
      ["GET", "/v1/vector_stores/:vector_store_id/file_batches/:batch_id/files", "listFileBatchFiles"],
    ]),
  },
  {
    // Files (spec 2.7; core/features/files): bytes in Blobs, metadata in Records, scoped to the caller's workspace; copied to
    // the provider the upload names, so a native batch or fine-tune can use them there.
    name: "files",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      { method: "POST", path: "/v1/files", handler: "uploadFile", auth: "api_key", body: "upload" },
      { method: "GET", path: "/v1/files", handler: "listFiles", auth: "api_key" },
      { method: "GET", path: "/v1/files/:id", handler: "getFile", auth: "api_key" },
      { method: "GET", path: "/v1/files/:id/content", handler: "fileContent", auth: "api_key" },
      { method: "DELETE", path: "/v1/files/:id", handler: "deleteFile", auth: "api_key" },
      // OpenAI's Uploads API (core/features/files/uploads.ts): a file in parts of at most 64 MB, each its own request.
      { method: "POST", path: "/v1/uploads", handler: "createUpload", auth: "api_key", body: "json" },
      { method: "POST", path: "/v1/uploads/:id/parts", handler: "addUploadPart", auth: "api_key", body: "upload" },
      { method: "POST", path: "/v1/uploads/:id/complete", handler: "completeUpload", auth: "api_key", body: "json" },
      { method: "POST", path: "/v1/uploads/:id/cancel", handler: "cancelUpload", auth: "api_key" },
    ],
  },
  {
    // Batches (spec 2.6; core/features/batches) on any provider: native where the provider has a batch API, else run by
    // the gateway's queue workers through the normal pipeline.
    name: "batches",
    dataPlane: true,
    timeoutSeconds: 300,
    routes: [
      { method: "POST", path: "/v1/batches", handler: "createBatch", auth: "api_key", body: "json" },
      { method: "GET", path: "/v1/batches", handler: "listBatches", auth: "api_key" },
      { method: "GET", path: "/v1/batches/:id", handler: "getBatch", auth: "api_key" },
      { method: "POST", path: "/v1/batches/:id/cancel", handler: "cancelBatch", auth: "api_key" },
      // Spec 4.8: an administrator points a batch at another output file of its workspace.
      {
        method: "PUT",
        path: "/v2/batches/:id",
        handler: "updateBatch",
        auth: "api_key",
        body: "json",
        scope: "batches.update",
      },
    ],
  },
  {
    // Fine-tuning (spec 2.9, 4.5; core/features/fine-tuning): jobs forwarded to the provider, recorded in the workspace,
    // their status refreshed by a scheduled task.
    name: "fine-tuning",
    dataPlane: true,
    timeoutSeconds: 120,
    routes: [
      { method: "POST", path: "/v1/fine_tuning/jobs", handler: "createFineTuningJob", auth: "api_key", body: "json" },
      { method: "GET", path: "/v1/fine_tuning/jobs", handler: "listFineTuningJobs", auth: "api_key" },
      { method: "GET", path: "/v1/fine_tuning/jobs/:id", handler: "getFineTuningJob", auth: "api_key" },
      { method: "POST", path: "/v1/fine_tuning/jobs/:id/cancel", handler: "cancelFineTuningJob", auth: "api_key" },
      { method: "GET", path: "/v1/fine_tuning/jobs/:id/events", handler: "listFineTuningEvents", auth: "api_key" },
      {
        method: "GET",
        path: "/v1/fine_tuning/jobs/:id/checkpoints",
        handler: "listFineTuningCheckpoints",
        auth: "api_key",
      },
    ],
  },
  {
    name: "models",
    dataPlane: true,
    timeoutSeconds: 30,
    routes: [{ method: "GET", path: "/v1/models", handler: "listModels", auth: "api_key" }],
  },
  {
    // OpenAI's Realtime API over a WebSocket (core/inference/realtime): the upgrade is served by the platform's upgrade
    // handler (core/platform/node/realtime-upgrade.ts); this route answers a plain GET. On AWS a container service.
    name: "realtime",
    dataPlane: true,
    timeoutSeconds: 900,
    platform: "container",
    routes: [{ method: "GET", path: "/v1/realtime", handler: "realtime", auth: "api_key" }],
  },
  {
    // The MCP gateway (core/features/mcp; docs/mcp.md): one streamable-HTTP MCP endpoint per server (stateless; the
    // handler authenticates itself, to answer 401 with the OAuth protected-resource challenge), and the MCP
    // registry API's list of the servers a caller may use.
    name: "mcp",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      ...(["POST", "GET", "DELETE"] as const).map(
        (method): RouteSpec => ({
          method,
          path: "/mcp/:server",
          handler: "mcpEndpoint",
          auth: "none",
          body: "json",
          cors: true,
        }),
      ),
      { method: "GET", path: "/v0.1/servers", handler: "registryServers", auth: "api_key", cors: true },
    ],
  },
  {
    // Generic pass-through (spec 4.7): /v1/proxy/* always forwards raw; /v1/* forwards whatever no dedicated
    // route handles. Configs, retries, custom-host checks and auth apply as on every other route.
    name: "passthrough",
    dataPlane: true,
    timeoutSeconds: 900,
    routes: [
      ...PASSTHROUGH_METHODS.map(
        (method): RouteSpec => ({ method, path: "/v1/proxy/*", handler: "proxy", auth: "api_key", body: "upload" }),
      ),
      ...PASSTHROUGH_METHODS.map(
        (method): RouteSpec => ({
          method,
          path: "/v1/*",
          handler: "passthrough",
          auth: "api_key",
          body: "upload",
          catchAll: true,
        }),
      ),
    ],
  },
  {
    name: "logs",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      { method: "GET", path: "/v1/logs", handler: "listLogs", auth: "api_key", scope: "logs.list" },
      { method: "POST", path: "/v1/logs", handler: "createLog", auth: "api_key", body: "json", scope: "logs.write" },
      // Log exports (core/observe/exports) share the /v1/logs prefix, so they live in this family; before /v1/logs/:id.
      {
        method: "GET",
        path: "/v1/logs/exports/field-restrictions",
        handler: "exportFieldRestrictions",
        auth: "api_key",
        scope: "logs.export",
      },
      {
        method: "POST",
        path: "/v1/logs/exports",
        handler: "createExport",
        auth: "api_key",
        body: "json",
        scope: "logs.export",
      },
      { method: "GET", path: "/v1/logs/exports", handler: "listExports", auth: "api_key", scope: "logs.list" },
      { method: "GET", path: "/v1/logs/exports/:id", handler: "getExport", auth: "api_key", scope: "logs.view" },
      {
        method: "PUT",
        path: "/v1/logs/exports/:id",
        handler: "updateExport",
        auth: "api_key",
        body: "json",
        scope: "logs.export",
      },
      {
        method: "POST",
        path: "/v1/logs/exports/:id/start",
        handler: "startExport",
        auth: "api_key",
        scope: "logs.export",
      },
      {
        method: "POST",
        path: "/v1/logs/exports/:id/cancel",
        handler: "cancelExport",
        auth: "api_key",
        scope: "logs.export",
      },
      {
        method: "GET",
        path: "/v1/logs/exports/:id/download",
        handler: "downloadExport",
        auth: "api_key",
        scope: "logs.view",
      },
      { method: "GET", path: "/v1/logs/traces/:traceId", handler: "getTrace", auth: "api_key", scope: "logs.view" },
      { method: "GET", path: "/v1/logs/:id", handler: "getLog", auth: "api_key", scope: "logs.view" },
    ],
  },
  {
    // Feedback on traced requests (workspace keys only), counted into analytics.
    name: "feedback",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/feedback",
        handler: "createFeedback",
        auth: "api_key",
        body: "json",
        scope: "feedback.create",
      },
      {
        method: "PUT",
        path: "/v1/feedback/:id",
        handler: "updateFeedback",
        auth: "api_key",
        body: "json",
        scope: "feedback.update",
      },
    ],
  },
  {
    // Analytics from the per-hour / per-day aggregates (core/observe/analytics).
    name: "analytics",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "GET",
        path: "/v1/analytics/graphs/:metric",
        handler: "graph",
        auth: "api_key",
        scope: "analytics.view",
      },
      {
        // The portkey-ai SDK's feedbacks/score, feedbacks/weighted and feedbacks/ai-models.
        method: "GET",
        path: "/v1/analytics/graphs/feedbacks/:view",
        handler: "feedbackGraph",
        auth: "api_key",
        scope: "analytics.view",
      },
      { method: "GET", path: "/v1/analytics/summary", handler: "summary", auth: "api_key", scope: "analytics.view" },
      {
        method: "GET",
        path: "/v1/analytics/summary/cache",
        handler: "cacheSummary",
        auth: "api_key",
        scope: "analytics.view",
      },
      {
        method: "GET",
        path: "/v1/analytics/groups/metadata/:key",
        handler: "groups",
        auth: "api_key",
        scope: "analytics.view",
      },
      {
        method: "GET",
        path: "/v1/analytics/groups/:group",
        handler: "groups",
        auth: "api_key",
        scope: "analytics.view",
      },
    ],
  },
  {
    // Prometheus text, only when ENABLE_PROMETHEUS is set (404 otherwise).
    name: "metrics",
    dataPlane: false,
    timeoutSeconds: 10,
    routes: [
      { method: "GET", path: "/metrics", handler: "metrics", auth: "none" },
      { method: "GET", path: "/dataservice/metrics", handler: "metrics", auth: "none" },
    ],
  },
  {
    // Signed blob downloads where the gateway serves them itself (local folder blobs); the signature is the credential.
    name: "blobs",
    dataPlane: false,
    timeoutSeconds: 300,
    routes: [{ method: "GET", path: "/_blobs/*", handler: "download", auth: "none" }],
  },
  {
    // Saved routing configs with versions (x-gateway-config: <id or slug>).
    name: "configs",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/configs",
        handler: "createConfig",
        auth: "api_key",
        body: "json",
        scope: "configs.create",
      },
      { method: "GET", path: "/v1/configs", handler: "listConfigs", auth: "api_key", scope: "configs.list" },
      {
        method: "GET",
        path: "/v1/configs/:id/versions",
        handler: "listConfigVersions",
        auth: "api_key",
        scope: "configs.read",
      },
      { method: "GET", path: "/v1/configs/:id", handler: "getConfig", auth: "api_key", scope: "configs.read" },
      {
        method: "PUT",
        path: "/v1/configs/:id",
        handler: "updateConfig",
        auth: "api_key",
        body: "json",
        scope: "configs.update",
      },
      { method: "DELETE", path: "/v1/configs/:id", handler: "deleteConfig", auth: "api_key", scope: "configs.delete" },
    ],
  },
  {
    // Saved guardrails with versions (core/control/guardrails/service.ts). A workspace's guardrails need the
    // `guardrails.*` scopes, organisation-level ones the `organisation_guardrails.*` scopes: a route admits
    // either, and the service checks the one the guardrail needs.
    name: "guardrails",
    dataPlane: false,
    // Invoking a guardrail runs its checks (webhooks and judges, up to timeout_ms each).
    timeoutSeconds: 300,
    routes: [
      {
        // A saved guardrail's checks run on demand, without a model call (core/inference/guardrails/invocation.ts); each
        // check is bounded by its guardrail's timeout_ms (webhooks, model-graded judges).
        method: "POST",
        path: "/v1/guardrails/:id/invoke",
        handler: "invokeGuardrail",
        auth: "api_key",
        body: "json",
        scope: "guardrails.invoke",
      },
      {
        method: "POST",
        path: "/v1/guardrails",
        handler: "createGuardrail",
        auth: "api_key",
        body: "json",
        scope: "guardrails.create",
        organisationScope: "organisation_guardrails.create",
      },
      {
        method: "GET",
        path: "/v1/guardrails",
        handler: "listGuardrails",
        auth: "api_key",
        scope: "guardrails.list",
        organisationScope: "organisation_guardrails.list",
      },
      {
        method: "GET",
        path: "/v1/guardrails/:id/versions",
        handler: "listGuardrailVersions",
        auth: "api_key",
        scope: "guardrails.read",
        organisationScope: "organisation_guardrails.read",
      },
      {
        method: "GET",
        path: "/v1/guardrails/:id",
        handler: "getGuardrail",
        auth: "api_key",
        scope: "guardrails.read",
        organisationScope: "organisation_guardrails.read",
      },
      {
        method: "PUT",
        path: "/v1/guardrails/:id",
        handler: "updateGuardrail",
        auth: "api_key",
        body: "json",
        scope: "guardrails.update",
        organisationScope: "organisation_guardrails.update",
      },
      {
        method: "DELETE",
        path: "/v1/guardrails/:id",
        handler: "deleteGuardrail",
        auth: "api_key",
        scope: "guardrails.delete",
        organisationScope: "organisation_guardrails.delete",
      },
    ],
  },
  {
    // Saved prompts (core/control/prompts/service.ts) with versions and labels, partials, labels, collections
    // and sharing. `/v1/prompts/partials` is listed before `/v1/prompts/:id` so that it never reads as a
    // prompt's slug (and no prompt may take the slug `partials`). The prompt runtime (render, completions)
    // belongs to this family too: `:id` then carries an optional version suffix (`@latest`, `@<n>`,
    // `@<label>`); rendering reads the prompt (`prompts.read`), running it is inference, open to any key like
    // /v1/chat/completions, counted in analytics and allowed a stream's time. Never forwarded raw to a provider.
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
  },
  {
    // Integrations: saved AI providers (x-gateway-provider: @slug), workspace access, models.
    name: "integrations",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/integrations",
        handler: "createIntegration",
        auth: "api_key",
        body: "json",
        scope: "integrations.create",
      },
      {
        method: "GET",
        path: "/v1/integrations",
        handler: "listIntegrations",
        auth: "api_key",
        scope: "integrations.list",
      },
      {
        method: "GET",
        path: "/v1/integrations/:id/workspaces",
        handler: "listIntegrationWorkspaces",
        auth: "api_key",
        scope: "integrations.read",
      },
      {
        method: "PUT",
        path: "/v1/integrations/:id/workspaces",
        handler: "updateIntegrationWorkspaces",
        auth: "api_key",
        body: "json",
        scope: "integrations.update",
      },
      {
        method: "GET",
        path: "/v1/integrations/:id/models",
        handler: "listIntegrationModels",
        auth: "api_key",
        scope: "integrations.read",
      },
      {
        method: "PUT",
        path: "/v1/integrations/:id/models",
        handler: "updateIntegrationModels",
        auth: "api_key",
        body: "json",
        scope: "integrations.update",
      },
      {
        method: "DELETE",
        path: "/v1/integrations/:id/models",
        handler: "deleteIntegrationModels",
        auth: "api_key",
        scope: "integrations.update",
      },
      {
        method: "PUT",
        path: "/v1/integrations/:id/integration-models",
        handler: "updateIntegrationModels",
        auth: "api_key",
        body: "json",
        scope: "integrations.update",
      },
      {
        method: "GET",
        path: "/v1/integrations/:id",
        handler: "getIntegration",
        auth: "api_key",
        scope: "integrations.read",
      },
      {
        method: "PUT",
        path: "/v1/integrations/:id",
        handler: "updateIntegration",
        auth: "api_key",
        body: "json",
        scope: "integrations.update",
      },
      {
        method: "DELETE",
        path: "/v1/integrations/:id",
        handler: "deleteIntegration",
        auth: "api_key",
        scope: "integrations.delete",
      },
    ],
  },
  {
    // A workspace's providers (the portkey-ai SDK's providers.*): named handles on integrations, used as `@slug`.
    name: "providers",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/providers",
        handler: "createProvider",
        auth: "api_key",
        body: "json",
        scope: "providers.create",
      },
      { method: "GET", path: "/v1/providers", handler: "listProviders", auth: "api_key", scope: "providers.list" },
      { method: "GET", path: "/v1/providers/:id", handler: "getProvider", auth: "api_key", scope: "providers.read" },
      {
        method: "PUT",
        path: "/v1/providers/:id",
        handler: "updateProvider",
        auth: "api_key",
        body: "json",
        scope: "providers.update",
      },
      {
        method: "DELETE",
        path: "/v1/providers/:id",
        handler: "deleteProvider",
        auth: "api_key",
        scope: "providers.delete",
      },
    ],
  },
  {
    // The MCP control plane (issue 27; the portkey-ai SDK's mcpIntegrations.* and mcpServers.*): upstream MCP
    // servers (integrations), their exposure in workspaces (servers), capabilities, user access and connections.
    name: "mcp-admin",
    dataPlane: false,
    timeoutSeconds: 60,
    routes: [
      {
        method: "POST",
        path: "/v1/mcp-integrations",
        handler: "createMcpIntegration",
        auth: "api_key",
        body: "json",
        scope: "mcp_integrations.create",
      },
      {
        method: "GET",
        path: "/v1/mcp-integrations",
        handler: "listMcpIntegrations",
        auth: "api_key",
        scope: "mcp_integrations.list",
      },
      {
        method: "GET",
        path: "/v1/mcp-integrations/:id",
        handler: "getMcpIntegration",
        auth: "api_key",
        scope: "mcp_integrations.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-integrations/:id",
        handler: "updateMcpIntegration",
        auth: "api_key",
        body: "json",
        scope: "mcp_integrations.update",
      },
      {
        method: "DELETE",
        path: "/v1/mcp-integrations/:id",
        handler: "deleteMcpIntegration",
        auth: "api_key",
        scope: "mcp_integrations.delete",
      },
      {
        method: "POST",
        path: "/v1/mcp-integrations/:id/sync",
        handler: "syncMcpIntegration",
        auth: "api_key",
        body: "json",
        scope: "mcp_integrations.update",
      },
      {
        method: "POST",
        path: "/v1/mcp-integrations/:id/test",
        handler: "testMcpIntegration",
        auth: "api_key",
        body: "json",
        scope: "mcp_integrations.read",
      },
      {
        method: "GET",
        path: "/v1/mcp-integrations/:id/workspaces",
        handler: "getMcpIntegrationWorkspaces",
        auth: "api_key",
        scope: "mcp_integrations.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-integrations/:id/workspaces",
        handler: "updateMcpIntegrationWorkspaces",
        auth: "api_key",
        body: "json",
        scope: "mcp_integrations.update",
      },
      {
        method: "GET",
        path: "/v1/mcp-integrations/:id/capabilities",
        handler: "getMcpIntegrationCapabilities",
        auth: "api_key",
        scope: "mcp_integrations.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-integrations/:id/capabilities",
        handler: "updateMcpIntegrationCapabilities",
        auth: "api_key",
        body: "json",
        scope: "mcp_integrations.update",
      },
      {
        method: "GET",
        path: "/v1/mcp-integrations/:id/metadata",
        handler: "getMcpIntegrationMetadata",
        auth: "api_key",
        scope: "mcp_integrations.read",
      },
      {
        method: "POST",
        path: "/v1/mcp-servers",
        handler: "createMcpServer",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.create",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers",
        handler: "listMcpServers",
        auth: "api_key",
        scope: "mcp_servers.list",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id",
        handler: "getMcpServer",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-servers/:id",
        handler: "updateMcpServer",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.update",
      },
      {
        method: "DELETE",
        path: "/v1/mcp-servers/:id",
        handler: "deleteMcpServer",
        auth: "api_key",
        scope: "mcp_servers.delete",
      },
      {
        method: "POST",
        path: "/v1/mcp-servers/:id/test",
        handler: "testMcpServer",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.read",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/capabilities",
        handler: "getMcpServerCapabilities",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-servers/:id/capabilities",
        handler: "updateMcpServerCapabilities",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.update",
      },
      {
        method: "POST",
        path: "/v1/mcp-servers/:id/capabilities/sync",
        handler: "syncMcpServerCapabilities",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.update",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/user-access/check",
        handler: "checkMcpServerUserAccess",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/user-access",
        handler: "getMcpServerUserAccess",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-servers/:id/user-access",
        handler: "updateMcpServerUserAccess",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.update",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/metadata",
        handler: "getMcpServerMetadata",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "POST",
        path: "/v1/mcp-servers/:id/metadata/sync",
        handler: "syncMcpServerMetadata",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.update",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/tokens",
        handler: "getMcpServerTokens",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "PUT",
        path: "/v1/mcp-servers/:id/tokens",
        handler: "setMcpServerTokens",
        auth: "api_key",
        body: "json",
        scope: "mcp_servers.update",
      },
      {
        method: "DELETE",
        path: "/v1/mcp-servers/:id/tokens",
        handler: "deleteMcpServerTokens",
        auth: "api_key",
        scope: "mcp_servers.update",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/client-info",
        handler: "getMcpServerClientInfo",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "GET",
        path: "/v1/mcp-servers/:id/connections",
        handler: "listMcpServerConnections",
        auth: "api_key",
        scope: "mcp_servers.read",
      },
      {
        method: "DELETE",
        path: "/v1/mcp-servers/:id/connections",
        handler: "deleteMcpServerConnection",
        auth: "api_key",
        scope: "mcp_servers.update",
      },
    ],
  },
  {
    // Model price overrides and custom models, per organisation, workspace or integration (cost tracking).
    name: "model-pricing",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/model-pricing",
        handler: "createModelPricing",
        auth: "api_key",
        body: "json",
        scope: "model_pricing.create",
      },
      {
        method: "GET",
        path: "/v1/model-pricing",
        handler: "listModelPricing",
        auth: "api_key",
        scope: "model_pricing.list",
      },
      {
        method: "GET",
        path: "/v1/model-pricing/:id",
        handler: "getModelPricing",
        auth: "api_key",
        scope: "model_pricing.read",
      },
      {
        method: "PUT",
        path: "/v1/model-pricing/:id",
        handler: "updateModelPricing",
        auth: "api_key",
        body: "json",
        scope: "model_pricing.update",
      },
      {
        method: "DELETE",
        path: "/v1/model-pricing/:id",
        handler: "deleteModelPricing",
        auth: "api_key",
        scope: "model_pricing.delete",
      },
    ],
  },
  {
    // The agents gateway (core/features/agents): A2A agent integrations, and each one served as the gateway's own A2A agent
    // at /v1/agents/:agent (id or slug), forwarded upstream with the integration's stored credentials.
    name: "agents",
    dataPlane: false,
    timeoutSeconds: 900,
    routes: [
      {
        method: "POST",
        path: "/v2/agent-integrations/fetch-agent-card",
        handler: "fetchAgentCard",
        auth: "api_key",
        body: "json",
        scope: "agent_integrations.create",
      },
      {
        method: "POST",
        path: "/v2/agent-integrations",
        handler: "createAgentIntegration",
        auth: "api_key",
        body: "json",
        scope: "agent_integrations.create",
      },
      {
        method: "GET",
        path: "/v2/agent-integrations",
        handler: "listAgentIntegrations",
        auth: "api_key",
        scope: "agent_integrations.list",
      },
      {
        method: "GET",
        path: "/v2/agent-integrations/:id",
        handler: "getAgentIntegration",
        auth: "api_key",
        scope: "agent_integrations.read",
      },
      {
        method: "PUT",
        path: "/v2/agent-integrations/:id",
        handler: "updateAgentIntegration",
        auth: "api_key",
        body: "json",
        scope: "agent_integrations.update",
      },
      {
        method: "DELETE",
        path: "/v2/agent-integrations/:id",
        handler: "deleteAgentIntegration",
        auth: "api_key",
        scope: "agent_integrations.delete",
      },
      {
        method: "GET",
        path: "/v1/agents/:agent/.well-known/agent-card.json",
        handler: "agentCard",
        auth: "api_key",
        scope: "agents.invoke",
      },
      {
        method: "GET",
        path: "/v1/agents/:agent/.well-known/agent.json",
        handler: "agentCard",
        auth: "api_key",
        scope: "agents.invoke",
      },
      {
        method: "POST",
        path: "/v1/agents/:agent",
        handler: "invokeAgent",
        auth: "api_key",
        body: "json",
        scope: "agents.invoke",
        inference: true,
      },
    ],
  },
  {
    // Legacy virtual keys (x-gateway-virtual-key: <slug>).
    name: "virtual-keys",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/virtual-keys",
        handler: "createVirtualKey",
        auth: "api_key",
        body: "json",
        scope: "virtual_keys.create",
      },
      {
        method: "GET",
        path: "/v1/virtual-keys",
        handler: "listVirtualKeys",
        auth: "api_key",
        scope: "virtual_keys.list",
      },
      {
        method: "GET",
        path: "/v1/virtual-keys/:slug/workspaces",
        handler: "listVirtualKeyWorkspaces",
        auth: "api_key",
        scope: "virtual_keys.read",
      },
      {
        method: "PUT",
        path: "/v1/virtual-keys/:slug/workspaces",
        handler: "updateVirtualKeyWorkspaces",
        auth: "api_key",
        body: "json",
        scope: "virtual_keys.update",
      },
      {
        method: "GET",
        path: "/v1/virtual-keys/:slug",
        handler: "getVirtualKey",
        auth: "api_key",
        scope: "virtual_keys.read",
      },
      {
        method: "PUT",
        path: "/v1/virtual-keys/:slug",
        handler: "updateVirtualKey",
        auth: "api_key",
        body: "json",
        scope: "virtual_keys.update",
      },
      {
        method: "DELETE",
        path: "/v1/virtual-keys/:slug",
        handler: "deleteVirtualKey",
        auth: "api_key",
        scope: "virtual_keys.delete",
      },
    ],
  },
  {
    // API keys (spec 4.8, 5.5). `:id/rotate` precedes the generic `:type/:subType` create (first match wins).
    name: "api-keys",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/api-keys/:id/rotate",
        handler: "rotateKey",
        auth: "api_key",
        scope: "api_keys.update",
      },
      {
        method: "POST",
        path: "/v1/api-keys/organisation/service",
        handler: "createOrganisationServiceKey",
        auth: "api_key",
        body: "json",
        scope: "api_keys.create",
      },
      {
        method: "POST",
        path: "/v1/api-keys/workspace/user",
        handler: "createWorkspaceUserKey",
        auth: "api_key",
        body: "json",
        scope: "api_keys.create",
      },
      {
        method: "POST",
        path: "/v1/api-keys/workspace/service",
        handler: "createWorkspaceServiceKey",
        auth: "api_key",
        body: "json",
        scope: "api_keys.create",
      },
      {
        method: "POST",
        path: "/v1/api-keys/:type/:subType",
        handler: "createKeyByType",
        auth: "api_key",
        body: "json",
        scope: "api_keys.create",
      },
      {
        method: "POST",
        path: "/v1/api-keys",
        handler: "createKeyFromBody",
        auth: "api_key",
        body: "json",
        scope: "api_keys.create",
      },
      { method: "GET", path: "/v1/api-keys", handler: "listKeys", auth: "api_key", scope: "api_keys.list" },
      { method: "GET", path: "/v2/api-keys", handler: "batchLookupKeys", auth: "api_key", scope: "api_keys.list" },
      { method: "GET", path: "/v1/api-keys/:id", handler: "getKey", auth: "api_key", scope: "api_keys.read" },
      {
        method: "PUT",
        path: "/v1/api-keys/:id",
        handler: "updateKey",
        auth: "api_key",
        body: "json",
        scope: "api_keys.update",
      },
      { method: "DELETE", path: "/v1/api-keys/:id", handler: "deleteKey", auth: "api_key", scope: "api_keys.delete" },
    ],
  },
  {
    // The caller's own identity: JWT (or session) only (spec 4.8).
    name: "auth",
    dataPlane: false,
    timeoutSeconds: 10,
    routes: [{ method: "GET", path: "/v1/auth/self", handler: "self", auth: "api_key" }],
  },
  {
    // OIDC single sign-on (issue 28, spec 5.5): organisation SSO settings (admins), browser login and logout.
    name: "sso",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "GET",
        path: "/v1/admin/organisation/sso",
        handler: "getSsoSettings",
        auth: "api_key",
        scope: "sso_settings.read",
      },
      {
        method: "PUT",
        path: "/v1/admin/organisation/sso",
        handler: "updateSsoSettings",
        auth: "api_key",
        body: "json",
        scope: "sso_settings.update",
      },
      { method: "GET", path: "/v1/auth/sso/login", handler: "ssoLogin", auth: "none" },
      { method: "GET", path: "/v1/auth/sso/callback", handler: "ssoCallback", auth: "none" },
      { method: "POST", path: "/v1/auth/logout", handler: "logout", auth: "none" },
    ],
  },
  {
    // OAuth 2.1 for MCP clients (core/features/mcp/oauth; docs/mcp-oauth.md): discovery, registration, authorize pages,
    // tokens, introspection, revocation; per-user OAuth to upstream MCP servers. Public routes: each endpoint
    // authenticates its caller the OAuth way (client credentials, a session or API key at sign-in).
    name: "oauth",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "GET",
        path: "/.well-known/oauth-authorization-server",
        handler: "authorizationServerMetadata",
        auth: "none",
        cors: true,
      },
      {
        method: "GET",
        path: "/.well-known/oauth-protected-resource",
        handler: "protectedResourceMetadata",
        auth: "none",
        cors: true,
      },
      {
        method: "GET",
        path: "/.well-known/oauth-protected-resource/mcp/:server",
        handler: "protectedResourceMetadata",
        auth: "none",
        cors: true,
      },
      { method: "POST", path: "/oauth/register", handler: "registerClient", auth: "none", body: "json", cors: true },
      { method: "GET", path: "/oauth/authorize", handler: "authorize", auth: "none" },
      { method: "POST", path: "/oauth/authorize/sign-in", handler: "authorizeSignIn", auth: "none" },
      { method: "POST", path: "/oauth/authorize/consent", handler: "authorizeConsent", auth: "none" },
      { method: "POST", path: "/oauth/token", handler: "token", auth: "none", cors: true },
      { method: "POST", path: "/oauth/introspect", handler: "introspect", auth: "none" },
      { method: "POST", path: "/oauth/revoke", handler: "revoke", auth: "none", cors: true },
      { method: "GET", path: "/oauth/upstream/:server/connect", handler: "upstreamConnect", auth: "none" },
      { method: "GET", path: "/oauth/upstream/callback", handler: "upstreamCallback", auth: "none" },
    ],
  },
  {
    // Workspaces and their members (spec 2.11, 4.8, 5.5): admin keys manage; a workspace key reads its own.
    name: "workspaces",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "GET",
        path: "/v1/admin/workspaces",
        handler: "listWorkspaces",
        auth: "api_key",
        scope: "workspaces.list",
      },
      {
        method: "POST",
        path: "/v1/admin/workspaces",
        handler: "createWorkspace",
        auth: "api_key",
        body: "json",
        scope: "workspaces.create",
      },
      {
        method: "GET",
        path: "/v1/admin/workspaces/:id",
        handler: "getWorkspace",
        auth: "api_key",
        scope: "workspaces.read",
      },
      {
        method: "PUT",
        path: "/v1/admin/workspaces/:id",
        handler: "updateWorkspace",
        auth: "api_key",
        body: "json",
        scope: "workspaces.update",
      },
      {
        method: "DELETE",
        path: "/v1/admin/workspaces/:id",
        handler: "deleteWorkspace",
        auth: "api_key",
        scope: "workspaces.delete",
      },
      { method: "GET", path: "/v2/workspaces/:id", handler: "getWorkspace", auth: "api_key", scope: "workspaces.read" },
      {
        method: "PUT",
        path: "/v2/workspaces/:id",
        handler: "updateWorkspace",
        auth: "api_key",
        body: "json",
        scope: "workspaces.update",
      },
      {
        method: "GET",
        path: "/v1/admin/workspaces/:id/users",
        handler: "listWorkspaceMembers",
        auth: "api_key",
        scope: "workspace_users.list",
      },
      {
        method: "POST",
        path: "/v1/admin/workspaces/:id/users",
        handler: "addWorkspaceMembers",
        auth: "api_key",
        body: "json",
        scope: "workspace_users.create",
      },
      {
        method: "GET",
        path: "/v1/admin/workspaces/:id/users/:userId",
        handler: "getWorkspaceMember",
        auth: "api_key",
        scope: "workspace_users.read",
      },
      {
        method: "PUT",
        path: "/v1/admin/workspaces/:id/users/:userId",
        handler: "updateWorkspaceMember",
        auth: "api_key",
        body: "json",
        scope: "workspace_users.update",
      },
      {
        method: "DELETE",
        path: "/v1/admin/workspaces/:id/users/:userId",
        handler: "removeWorkspaceMember",
        auth: "api_key",
        scope: "workspace_users.delete",
      },
    ],
  },
  {
    // Users and invites (admin only); accepting an invite is public and proven by the invite token.
    name: "users",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      // Fixed `invites` paths before `/:id`, so they win.
      {
        method: "GET",
        path: "/v1/admin/users/invites",
        handler: "listInvites",
        auth: "api_key",
        scope: "invites.list",
      },
      {
        method: "POST",
        path: "/v1/admin/users/invites",
        handler: "createInvite",
        auth: "api_key",
        body: "json",
        scope: "invites.create",
      },
      { method: "POST", path: "/v1/admin/users/invites/accept", handler: "acceptInvite", auth: "none", body: "json" },
      {
        method: "GET",
        path: "/v1/admin/users/invites/:id",
        handler: "getInvite",
        auth: "api_key",
        scope: "invites.read",
      },
      {
        method: "POST",
        path: "/v1/admin/users/invites/:id/resend",
        handler: "resendInvite",
        auth: "api_key",
        scope: "invites.update",
      },
      {
        method: "DELETE",
        path: "/v1/admin/users/invites/:id",
        handler: "deleteInvite",
        auth: "api_key",
        scope: "invites.delete",
      },
      { method: "GET", path: "/v1/admin/users", handler: "listUsers", auth: "api_key", scope: "users.list" },
      { method: "GET", path: "/v1/admin/users/:id", handler: "getUser", auth: "api_key", scope: "users.read" },
      {
        method: "PUT",
        path: "/v1/admin/users/:id",
        handler: "updateUser",
        auth: "api_key",
        body: "json",
        scope: "users.update",
      },
      { method: "DELETE", path: "/v1/admin/users/:id", handler: "deleteUser", auth: "api_key", scope: "users.delete" },
    ],
  },
  {
    // SCIM 2.0 provisioning (core/identity/scim): /scim/v2 authenticates with a SCIM token (checked by the handlers, not
    // API keys); the admin side (tokens, group mappings, spec 4.8's views) is for organisation admins.
    name: "scim",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "POST",
        path: "/v1/admin/scim/tokens",
        handler: "createScimToken",
        auth: "api_key",
        body: "json",
        scope: "scim_tokens.create",
      },
      {
        method: "GET",
        path: "/v1/admin/scim/tokens",
        handler: "listScimTokens",
        auth: "api_key",
        scope: "scim_tokens.list",
      },
      {
        method: "DELETE",
        path: "/v1/admin/scim/tokens/:id",
        handler: "revokeScimToken",
        auth: "api_key",
        scope: "scim_tokens.delete",
      },
      {
        method: "POST",
        path: "/v1/admin/scim/group-mappings",
        handler: "createScimGroupMapping",
        auth: "api_key",
        body: "json",
        scope: "scim_group_mappings.create",
      },
      {
        method: "GET",
        path: "/v1/admin/scim/group-mappings",
        handler: "listScimGroupMappings",
        auth: "api_key",
        scope: "scim_group_mappings.list",
      },
      {
        method: "GET",
        path: "/v1/admin/scim/group-mappings/:id",
        handler: "getScimGroupMapping",
        auth: "api_key",
        scope: "scim_group_mappings.read",
      },
      {
        method: "DELETE",
        path: "/v1/admin/scim/group-mappings/:id",
        handler: "deleteScimGroupMapping",
        auth: "api_key",
        scope: "scim_group_mappings.delete",
      },
      // Spec 4.8.
      {
        method: "GET",
        path: "/v1/scim/workspaces",
        handler: "scimWorkspaces",
        auth: "api_key",
        scope: "scim_group_mappings.list",
      },
      {
        method: "GET",
        path: "/v1/scim/groups",
        handler: "scimGroupsSearch",
        auth: "api_key",
        scope: "scim_groups.list",
      },
      {
        method: "DELETE",
        path: "/v1/scim/workspaces/:id/groups/:groupId",
        handler: "scimUnmapWorkspaceGroup",
        auth: "api_key",
        scope: "scim_group_mappings.delete",
      },
      // The SCIM protocol routes (RFC 7644): a SCIM token authenticates them (core/routes/handlers/scim.ts).
      ...(
        [
          ["GET", "/scim/v2/Users", "scimListUsers"],
          ["POST", "/scim/v2/Users", "scimCreateUser"],
          ["GET", "/scim/v2/Users/:id", "scimGetUser"],
          ["PUT", "/scim/v2/Users/:id", "scimReplaceUser"],
          ["PATCH", "/scim/v2/Users/:id", "scimPatchUser"],
          ["DELETE", "/scim/v2/Users/:id", "scimDeleteUser"],
          ["GET", "/scim/v2/Groups", "scimListGroups"],
          ["POST", "/scim/v2/Groups", "scimCreateGroup"],
          ["GET", "/scim/v2/Groups/:id", "scimGetGroup"],
          ["PUT", "/scim/v2/Groups/:id", "scimReplaceGroup"],
          ["PATCH", "/scim/v2/Groups/:id", "scimPatchGroup"],
          ["DELETE", "/scim/v2/Groups/:id", "scimDeleteGroup"],
        ] as Array<[Method, string, string]>
      ).map(
        ([method, path, handler]): RouteSpec => ({
          method,
          path,
          handler,
          auth: "none",
          ...(method === "POST" || method === "PUT" || method === "PATCH" ? { body: "json" as const } : {}),
        }),
      ),
    ],
  },
  {
    // Organisation settings and default guardrails, workspace exclusions, audit log (admin only).
    name: "organisation",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: [
      {
        method: "GET",
        path: "/v1/admin/organisation/settings",
        handler: "getOrganisationSettings",
        auth: "api_key",
        scope: "organisation_settings.read",
      },
      {
        method: "PUT",
        path: "/v1/admin/organisation/settings",
        handler: "updateOrganisationSettings",
        auth: "api_key",
        body: "json",
        scope: "organisation_settings.update",
      },
      {
        method: "GET",
        path: "/v1/admin/organisation/defaults",
        handler: "getOrganisationDefaults",
        auth: "api_key",
        scope: "organisation_settings.read",
      },
      {
        method: "PUT",
        path: "/v1/admin/organisation/defaults",
        handler: "updateOrganisationDefaults",
        auth: "api_key",
        body: "json",
        scope: "organisation_settings.update",
      },
      ...["input-guardrails", "output-guardrails"].flatMap((list): RouteSpec[] => [
        {
          method: "GET",
          path: `/v1/workspace-exclusions/${list}`,
          handler: "listWorkspaceExclusions",
          auth: "api_key",
          scope: "organisation_exclusions.list",
        },
        {
          method: "PUT",
          path: `/v1/workspace-exclusions/${list}`,
          handler: "updateWorkspaceExclusions",
          auth: "api_key",
          body: "json",
          scope: "organisation_exclusions.update",
        },
      ]),
      { method: "GET", path: "/v1/audit-logs", handler: "listAuditLogs", auth: "api_key", scope: "audit_logs.list" },
    ],
  },
  {
    // Usage-limit and rate-limit policies (core/inference/policies), under /v2 (Portkey's paths) and /v1.
    name: "policies",
    dataPlane: false,
    timeoutSeconds: 30,
    routes: ["/v2/policies", "/v1/policies"].flatMap((base) => [
      ...policyRoutes(`${base}/usage-limits`, {
        create: "createUsageLimitPolicy",
        list: "listUsageLimitPolicies",
        get: "getUsageLimitPolicy",
        update: "updateUsageLimitPolicy",
        remove: "deleteUsageLimitPolicy",
        usage: "getUsageLimitPolicyUsage",
      }),
      ...policyRoutes(`${base}/rate-limits`, {
        create: "createRateLimitPolicy",
        list: "listRateLimitPolicies",
        get: "getRateLimitPolicy",
        update: "updateRateLimitPolicy",
        remove: "deleteRateLimitPolicy",
        usage: "getRateLimitPolicyUsage",
      }),
    ]),
  },
];

export const familyByName = (name: string): RouteFamily => {
  const family = ROUTE_FAMILIES.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`unknown route family ${name}`);
  return family;
};
