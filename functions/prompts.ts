import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/prompts.ts";

/** Lambda entry point of the 'prompts' route family (infra/api.ts). */
export const handler = createLambdaHandler("prompts", handlers);
