import type * as z from "zod/v4/core";
import { createExportSchema, updateExportSchema } from "../../observe/exports/log-exports.ts";
import { createFeedbackSchema, updateFeedbackSchema } from "../../observe/feedback/feedback.ts";
import { chatCompletionRequest } from "../../inference/gateway/schemas/chat.ts";
import { mcpRequestBody } from "../../features/mcp/endpoint/jsonrpc-body.ts";
import {
  agentIntegrationCreateSchema,
  agentIntegrationUpdateSchema,
  fetchAgentCardSchema,
} from "../../features/agents/schemas.ts";
import { guardrailInvokeRequest } from "../../inference/guardrails/invoke-request.ts";
import { promptRequest } from "../../features/prompts/request.ts";
import { completionRequest } from "../../inference/gateway/schemas/completions.ts";
import { embeddingRequest } from "../../inference/gateway/schemas/embeddings.ts";
import { imageGenerationRequest } from "../../inference/gateway/schemas/images.ts";
import { speechRequest } from "../../inference/gateway/schemas/audio.ts";
import { moderationRequest } from "../../inference/gateway/schemas/moderations.ts";
import { rerankRequest } from "../../inference/gateway/schemas/rerank.ts";
import { ocrRequest } from "../../inference/gateway/schemas/ocr.ts";
import { createJobSchema } from "../../features/fine-tuning/schemas.ts";
import { createBatchSchema, updateBatchSchema } from "../../features/batches/schemas.ts";
import { completeUploadSchema, createUploadSchema } from "../../features/files/upload-requests.ts";
import { createKeySchema, keyFieldsSchema } from "../../control/api-keys/schemas.ts";
import { configCreateSchema, configUpdateSchema } from "../../control/configs/schemas.ts";
import { guardrailCreateSchema, guardrailUpdateSchema } from "../../control/guardrails/schemas.ts";
import {
  integrationCreateSchema,
  integrationModelsSchema,
  integrationUpdateSchema,
} from "../../control/integrations/schemas.ts";
import { virtualKeyCreateSchema, virtualKeyUpdateSchema } from "../../control/virtual-keys/schemas.ts";
import * as promptSchemas from "../../control/prompts/schemas.ts";
import { workspaceAccessSchema } from "../../control/workspaces/access-schemas.ts";
import {
  defaultsUpdateSchema,
  exclusionsUpdateSchema,
  settingsUpdateSchema,
} from "../../control/organisation/schemas.ts";
import { inviteAcceptSchema, inviteCreateSchema, userUpdateSchema } from "../../control/users/schemas.ts";
import { workspaceCreateSchema, workspaceUpdateSchema } from "../../control/workspaces/schemas.ts";
import { customLogRequest } from "../../observe/logs/schemas.ts";
import {
  rateCreateSchema,
  rateUpdateSchema,
  usageCreateSchema,
  usageUpdateSchema,
} from "../../inference/policies/requests.ts";
import {
  capabilitySwitchesSchema,
  mcpIntegrationCreateSchema,
  mcpIntegrationSyncSchema,
  mcpIntegrationUpdateSchema,
  mcpWorkspacesUpdateSchema,
} from "../../features/mcp/integrations/schemas.ts";
import * as serverSchemas from "../../features/mcp/servers/schemas.ts";

/**
 * The zod schema each route validates its JSON body with, by `METHOD path` as the route table writes it: the
 * OpenAPI document describes a body by the very schema that checks it, so the two cannot disagree. Routes
 * whose handlers validate in code rather than with an exported schema are described as a plain JSON object.
 * (test/unit/openapi/document.test.ts checks that every key names a route of the table.)
 */
export const REQUEST_BODIES: Record<string, z.$ZodType> = {
  "POST /v1/chat/completions": chatCompletionRequest,
  "POST /v1/completions": completionRequest,
  "POST /v1/embeddings": embeddingRequest,
  "POST /v1/images/generations": imageGenerationRequest,
  "POST /v1/audio/speech": speechRequest,
  "POST /v1/moderations": moderationRequest,
  "POST /v1/rerank": rerankRequest,
  "POST /v1/ocr": ocrRequest,
  "POST /v1/fine_tuning/jobs": createJobSchema,
  "POST /v1/batches": createBatchSchema,
  "PUT /v2/batches/:id": updateBatchSchema,
  "POST /v1/uploads": createUploadSchema,
  "POST /v1/uploads/:id/complete": completeUploadSchema,
  "POST /v1/logs": customLogRequest,
  "POST /v1/logs/exports": createExportSchema,
  "PUT /v1/logs/exports/:id": updateExportSchema,
  "POST /v1/guardrails/:id/invoke": guardrailInvokeRequest,
  "POST /v1/prompts/:id/render": promptRequest,
  "POST /v1/prompts/:id/completions": promptRequest,
  "POST /v1/prompts/:id/generate": promptRequest,
  "POST /v1/feedback": createFeedbackSchema,
  "PUT /v1/feedback/:id": updateFeedbackSchema,
  "POST /v1/admin/workspaces": workspaceCreateSchema,
  "PUT /v1/admin/workspaces/:id": workspaceUpdateSchema,
  "PUT /v2/workspaces/:id": workspaceUpdateSchema,
  "PUT /v1/admin/users/:id": userUpdateSchema,
  "POST /v1/admin/users/invites": inviteCreateSchema,
  "POST /v1/admin/users/invites/accept": inviteAcceptSchema,
  "PUT /v1/admin/organisation/settings": settingsUpdateSchema,
  "PUT /v1/admin/organisation/defaults": defaultsUpdateSchema,
  "PUT /v1/workspace-exclusions/input-guardrails": exclusionsUpdateSchema,
  "PUT /v1/workspace-exclusions/output-guardrails": exclusionsUpdateSchema,
  "POST /v1/configs": configCreateSchema,
  "PUT /v1/configs/:id": configUpdateSchema,
  "POST /v1/guardrails": guardrailCreateSchema,
  "PUT /v1/guardrails/:id": guardrailUpdateSchema,
  "POST /v1/prompts": promptSchemas.promptCreateSchema,
  "PUT /v1/prompts/:id": promptSchemas.promptUpdateSchema,
  "PUT /v1/prompts/:id/makeDefault": promptSchemas.publishSchema,
  "PUT /v1/prompts/:id/versions/:versionId": promptSchemas.promptVersionUpdateSchema,
  "POST /v1/prompts/partials": promptSchemas.partialCreateSchema,
  "PUT /v1/prompts/partials/:id": promptSchemas.partialUpdateSchema,
  "PUT /v1/prompts/partials/:id/makeDefault": promptSchemas.publishSchema,
  "POST /v1/labels": promptSchemas.labelCreateSchema,
  "PUT /v1/labels/:id": promptSchemas.labelUpdateSchema,
  "POST /v1/collections": promptSchemas.collectionCreateSchema,
  "PUT /v1/collections/:id": promptSchemas.collectionUpdateSchema,
  "POST /v2/prompts/:id/share": promptSchemas.shareSchema,
  "POST /v2/prompts/:id/unshare": promptSchemas.unshareSchema,
  "POST /v2/prompts/:id/fork": promptSchemas.forkSchema,
  "POST /v2/prompts/partials/:id/share": promptSchemas.shareSchema,
  "POST /v2/prompts/partials/:id/unshare": promptSchemas.unshareSchema,
  "POST /v2/prompts/partials/:id/fork": promptSchemas.forkSchema,
  "POST /v1/integrations": integrationCreateSchema,
  "PUT /v1/integrations/:id": integrationUpdateSchema,
  "PUT /v1/integrations/:id/workspaces": workspaceAccessSchema,
  "PUT /v1/integrations/:id/models": integrationModelsSchema,
  "PUT /v1/integrations/:id/integration-models": integrationModelsSchema,
  "POST /v1/virtual-keys": virtualKeyCreateSchema,
  "PUT /v1/virtual-keys/:slug": virtualKeyUpdateSchema,
  "PUT /v1/virtual-keys/:slug/workspaces": workspaceAccessSchema,
  "POST /v1/api-keys/organisation/service": createKeySchema,
  "POST /v1/api-keys/workspace/user": createKeySchema,
  "POST /v1/api-keys/workspace/service": createKeySchema,
  "POST /v1/api-keys/:type/:subType": createKeySchema,
  "POST /v1/api-keys": createKeySchema,
  "PUT /v1/api-keys/:id": keyFieldsSchema,
  "POST /v2/policies/usage-limits": usageCreateSchema,
  "PUT /v2/policies/usage-limits/:id": usageUpdateSchema,
  "POST /v2/policies/rate-limits": rateCreateSchema,
  "PUT /v2/policies/rate-limits/:id": rateUpdateSchema,
  "POST /v1/policies/usage-limits": usageCreateSchema,
  "PUT /v1/policies/usage-limits/:id": usageUpdateSchema,
  "POST /v1/policies/rate-limits": rateCreateSchema,
  "PUT /v1/policies/rate-limits/:id": rateUpdateSchema,
  "POST /v1/mcp-integrations": mcpIntegrationCreateSchema,
  "PUT /v1/mcp-integrations/:id": mcpIntegrationUpdateSchema,
  "POST /v1/mcp-integrations/:id/sync": mcpIntegrationSyncSchema,
  "PUT /v1/mcp-integrations/:id/workspaces": mcpWorkspacesUpdateSchema,
  "PUT /v1/mcp-integrations/:id/capabilities": capabilitySwitchesSchema,
  "POST /v1/mcp-servers": serverSchemas.mcpServerCreateSchema,
  "PUT /v1/mcp-servers/:id": serverSchemas.mcpServerUpdateSchema,
  "PUT /v1/mcp-servers/:id/capabilities": serverSchemas.serverCapabilitiesSchema,
  "POST /v1/mcp-servers/:id/capabilities/sync": serverSchemas.serverCapabilitiesSyncSchema,
  "PUT /v1/mcp-servers/:id/user-access": serverSchemas.userAccessUpdateSchema,
  "POST /v1/mcp-servers/:id/metadata/sync": serverSchemas.serverMetadataSchema,
  "PUT /v1/mcp-servers/:id/tokens": serverSchemas.tokensSetSchema,
  "POST /mcp/:server": mcpRequestBody,
  "POST /v2/agent-integrations/fetch-agent-card": fetchAgentCardSchema,
  "POST /v2/agent-integrations": agentIntegrationCreateSchema,
  "PUT /v2/agent-integrations/:id": agentIntegrationUpdateSchema,
};
