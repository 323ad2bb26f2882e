import type { HandlerMap } from "../../http/context.ts";
import { handlers as chat } from "./chat.ts";
import { handlers as completions } from "./completions.ts";
import { handlers as embeddings } from "./embeddings.ts";
import { handlers as health } from "./health.ts";
import { handlers as logs } from "./logs.ts";
import { handlers as models } from "./models.ts";
import { handlers as passthrough } from "./passthrough.ts";

/** Every family's handler module, for platforms that mount all families in one process (local server). */
export const ALL_HANDLERS: Record<string, HandlerMap> = {
  health,
  chat,
  completions,
  embeddings,
  models,
  logs,
  passthrough,
};
