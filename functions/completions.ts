import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/completions.ts";
import { family } from "../core/routes/table/completions.ts";

/** Lambda entry point of the 'completions' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
