import type { HandlerMap } from "../http/context.ts";
import { handlers as agents } from "./handlers/agents.ts";
import { handlers as analytics } from "./handlers/analytics.ts";
import { handlers as apiKeys } from "./handlers/api-keys.ts";
import { handlers as assistants } from "./handlers/assistants.ts";
import { handlers as audio } from "./handlers/audio.ts";
import { handlers as auth } from "./handlers/auth.ts";
import { handlers as batches } from "./handlers/batches.ts";
import { handlers as blobs } from "./handlers/blobs.ts";
import { handlers as chat } from "./handlers/chat.ts";
import { handlers as completions } from "./handlers/completions.ts";
import { handlers as configs } from "./handlers/configs.ts";
import { handlers as webConsole } from "./handlers/console.ts";
import { handlers as deployments } from "./handlers/deployments.ts";
import { handlers as embeddings } from "./handlers/embeddings.ts";
import { handlers as feedback } from "./handlers/feedback.ts";
import { handlers as files } from "./handlers/files.ts";
import { handlers as fineTuning } from "./handlers/fine-tuning.ts";
import { handlers as gemini } from "./handlers/gemini.ts";
import { handlers as guardrails } from "./handlers/guardrails.ts";
import { handlers as health } from "./handlers/health.ts";
import { handlers as images } from "./handlers/images.ts";
import { handlers as integrations } from "./handlers/integrations.ts";
import { handlers as logs } from "./handlers/logs.ts";
import { handlers as mcp } from "./handlers/mcp.ts";
import { handlers as mcpAdmin } from "./handlers/mcp-admin.ts";
import { handlers as messages } from "./handlers/messages.ts";
import { handlers as metrics } from "./handlers/metrics.ts";
import { handlers as modelPricing } from "./handlers/model-pricing.ts";
import { handlers as models } from "./handlers/models.ts";
import { handlers as moderations } from "./handlers/moderations.ts";
import { handlers as oauth } from "./handlers/oauth.ts";
import { handlers as ocr } from "./handlers/ocr.ts";
import { handlers as organisation } from "./handlers/organisation.ts";
import { handlers as passthrough } from "./handlers/passthrough.ts";
import { handlers as policies } from "./handlers/policies.ts";
import { handlers as prompts } from "./handlers/prompts.ts";
import { handlers as providers } from "./handlers/providers.ts";
import { handlers as realtime } from "./handlers/realtime.ts";
import { handlers as rerank } from "./handlers/rerank.ts";
import { handlers as responses } from "./handlers/responses.ts";
import { handlers as scim } from "./handlers/scim.ts";
import { handlers as sso } from "./handlers/sso.ts";
import { handlers as users } from "./handlers/users.ts";
import { handlers as virtualKeys } from "./handlers/virtual-keys.ts";
import { handlers as workspaces } from "./handlers/workspaces.ts";

/** Every family's handler module by family name, for platforms that mount all families in one process (local). */
export const ALL_HANDLERS: Record<string, HandlerMap> = {
  agents,
  analytics,
  "api-keys": apiKeys,
  assistants,
  audio,
  auth,
  batches,
  blobs,
  chat,
  completions,
  configs,
  console: webConsole,
  deployments,
  embeddings,
  feedback,
  files,
  "fine-tuning": fineTuning,
  gemini,
  guardrails,
  health,
  images,
  integrations,
  logs,
  mcp,
  "mcp-admin": mcpAdmin,
  messages,
  metrics,
  "model-pricing": modelPricing,
  models,
  moderations,
  oauth,
  ocr,
  organisation,
  passthrough,
  policies,
  prompts,
  providers,
  realtime,
  rerank,
  responses,
  scim,
  sso,
  users,
  "virtual-keys": virtualKeys,
  workspaces,
};
