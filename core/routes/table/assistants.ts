import type { Method, RouteFamily, RouteSpec } from "../../http/route-types.ts";

/** Assistants API routes from `[method, path, handler]` rows: API-key auth, JSON bodies on POST. */
function assistantsRoutes(rows: Array<[Method, string, string]>): RouteSpec[] {
  return rows.map(([method, path, handler]) =>
    method === "POST"
      ? { method, path, handler, auth: "api_key", body: "json" }
      : { method, path, handler, auth: "api_key" },
  );
}

/**
 * OpenAI's Assistants API v2 (core/features/assistants): forwarded to OpenAI or Azure OpenAI, objects recorded per
 * workspace (another workspace's ids answer 404, shared lists are filtered), finished runs' usage logged once.
 * `/v1/threads/runs` comes before `/v1/threads/:thread_id` (the router runs the first route that matches).
 */
export const family: RouteFamily = {
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
};
