import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/messages.ts";

/** Lambda entry point of the 'messages' route family (infra/api.ts). */
export const handler = createLambdaHandler("messages", handlers);
