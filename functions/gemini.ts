import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/gemini.ts";
import { family } from "../core/routes/table/gemini.ts";

/** Lambda entry point of the 'gemini' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
