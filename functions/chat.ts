import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/chat.ts";
import { family } from "../core/routes/table/chat.ts";

/** Lambda entry point of the 'chat' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
