import { handleAssistantsCall } from "../../features/assistants/forward.ts";
import { ASSISTANTS_OPERATIONS } from "../../features/assistants/operations.ts";
import type { HandlerMap } from "../../http/context.ts";

/** OpenAI's Assistants API v2 (core/features/assistants): one handler per operation, all forwarded the same way. */
export const handlers: HandlerMap = Object.fromEntries(
  Object.entries(ASSISTANTS_OPERATIONS).map(([name, operation]) => [
    name,
    (request: Request, ctx: Parameters<HandlerMap[string]>[1]) => handleAssistantsCall(request, ctx, operation),
  ]),
);
