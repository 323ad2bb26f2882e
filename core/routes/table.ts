/**
 * THE route table: route family -> routes, one pure-data file per family (routes/table/<family>.ts, named like
 * functions/<family>.ts and routes/handlers/<family>.ts). The local server mounts every family, infra/api.ts
 * creates one Lambda function per family and routes its paths to it, and tests check both. Nothing else lists
 * routes. Pure data, so infra and tests can read it without loading any handler code.
 */

import type { RouteFamily } from "../http/route-types.ts";
import { family as health } from "./table/health.ts";
import { family as webConsole } from "./table/console.ts";
import { family as deployments } from "./table/deployments.ts";
import { family as chat } from "./table/chat.ts";
import { family as responses } from "./table/responses.ts";
import { family as messages } from "./table/messages.ts";
import { family as completions } from "./table/completions.ts";
import { family as embeddings } from "./table/embeddings.ts";
import { family as images } from "./table/images.ts";
import { family as audio } from "./table/audio.ts";
import { family as moderations } from "./table/moderations.ts";
import { family as rerank } from "./table/rerank.ts";
import { family as ocr } from "./table/ocr.ts";
import { family as assistants } from "./table/assistants.ts";
import { family as files } from "./table/files.ts";
import { family as batches } from "./table/batches.ts";
import { family as fineTuning } from "./table/fine-tuning.ts";
import { family as models } from "./table/models.ts";
import { family as realtime } from "./table/realtime.ts";
import { family as mcp } from "./table/mcp.ts";
import { family as passthrough } from "./table/passthrough.ts";
import { family as logs } from "./table/logs.ts";
import { family as feedback } from "./table/feedback.ts";
import { family as analytics } from "./table/analytics.ts";
import { family as metrics } from "./table/metrics.ts";
import { family as blobs } from "./table/blobs.ts";
import { family as configs } from "./table/configs.ts";
import { family as guardrails } from "./table/guardrails.ts";
import { family as prompts } from "./table/prompts.ts";
import { family as integrations } from "./table/integrations.ts";
import { family as providers } from "./table/providers.ts";
import { family as mcpAdmin } from "./table/mcp-admin.ts";
import { family as modelPricing } from "./table/model-pricing.ts";
import { family as agents } from "./table/agents.ts";
import { family as virtualKeys } from "./table/virtual-keys.ts";
import { family as apiKeys } from "./table/api-keys.ts";
import { family as auth } from "./table/auth.ts";
import { family as sso } from "./table/sso.ts";
import { family as oauth } from "./table/oauth.ts";
import { family as workspaces } from "./table/workspaces.ts";
import { family as users } from "./table/users.ts";
import { family as scim } from "./table/scim.ts";
import { family as organisation } from "./table/organisation.ts";
import { family as policies } from "./table/policies.ts";

export type { Method, RouteFamily, RouteSpec } from "../http/route-types.ts";

/** Every family, in the order the local server mounts them. */
export const ROUTE_FAMILIES: RouteFamily[] = [
  health,
  webConsole,
  deployments,
  chat,
  responses,
  messages,
  completions,
  embeddings,
  images,
  audio,
  moderations,
  rerank,
  ocr,
  assistants,
  files,
  batches,
  fineTuning,
  models,
  realtime,
  mcp,
  passthrough,
  logs,
  feedback,
  analytics,
  metrics,
  blobs,
  configs,
  guardrails,
  prompts,
  integrations,
  providers,
  mcpAdmin,
  modelPricing,
  agents,
  virtualKeys,
  apiKeys,
  auth,
  sso,
  oauth,
  workspaces,
  users,
  scim,
  organisation,
  policies,
];

export const familyByName = (name: string): RouteFamily => {
  const family = ROUTE_FAMILIES.find((candidate) => candidate.name === name);
  if (!family) throw new Error(`unknown route family ${name}`);
  return family;
};
