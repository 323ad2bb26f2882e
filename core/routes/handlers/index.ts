import type { HandlerMap } from "../../http/context.ts";
import { handlers as apiKeys } from "./api-keys.ts";
import { handlers as auth } from "./auth.ts";
import { handlers as sso } from "./sso.ts";
import { handlers as batches } from "./batches.ts";
import { handlers as chat } from "./chat.ts";
import { handlers as messages } from "./messages.ts";
import { handlers as responses } from "./responses.ts";
import { handlers as completions } from "./completions.ts";
import { handlers as embeddings } from "./embeddings.ts";
import { handlers as images } from "./images.ts";
import { handlers as audio } from "./audio.ts";
import { handlers as moderations } from "./moderations.ts";
import { handlers as rerank } from "./rerank.ts";
import { handlers as ocr } from "./ocr.ts";
import { handlers as assistants } from "./assistants.ts";
import { handlers as fineTuning } from "./fine-tuning.ts";
import { handlers as health } from "./health.ts";
import { handlers as deployments } from "./deployments.ts";
import { handlers as logs } from "./logs.ts";
import { handlers as analytics } from "./analytics.ts";
import { handlers as blobs } from "./blobs.ts";
import { handlers as feedback } from "./feedback.ts";
import { handlers as files } from "./files.ts";
import { handlers as metrics } from "./metrics.ts";
import { handlers as configs } from "./configs.ts";
import { handlers as guardrails } from "./guardrails.ts";
import { handlers as integrations } from "./integrations.ts";
import { handlers as providers } from "./providers.ts";
import { handlers as modelPricing } from "./model-pricing.ts";
import { handlers as virtualKeys } from "./virtual-keys.ts";
import { handlers as models } from "./models.ts";
import { handlers as passthrough } from "./passthrough.ts";
import { handlers as realtime } from "./realtime.ts";
import { handlers as mcp } from "./mcp.ts";
import { handlers as policies } from "./policies.ts";
import { handlers as prompts } from "./prompts.ts";
import { handlers as organisation } from "./organisation.ts";
import { handlers as users } from "./users.ts";
import { handlers as scim } from "./scim.ts";
import { handlers as workspaces } from "./workspaces.ts";

/** Every family's handler module, for platforms that mount all families in one process (local server). */
export const ALL_HANDLERS: Record<string, HandlerMap> = {
  health,
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
  "fine-tuning": fineTuning,
  models,
  logs,
  feedback,
  analytics,
  metrics,
  blobs,
  configs,
  guardrails,
  integrations,
  providers,
  "model-pricing": modelPricing,
  "virtual-keys": virtualKeys,
  prompts,
  realtime,
  mcp,
  passthrough,
  "api-keys": apiKeys,
  auth,
  sso,
  workspaces,
  users,
  scim,
  organisation,
  policies,
};
