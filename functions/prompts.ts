import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/prompts.ts";
import { family } from "../core/routes/table/prompts.ts";

/** Lambda entry point of the 'prompts' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
