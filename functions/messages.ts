import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/messages.ts";
import { family } from "../core/routes/table/messages.ts";

/** Lambda entry point of the 'messages' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
