import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/responses.ts";
import { family } from "../core/routes/table/responses.ts";

/** Lambda entry point of the 'responses' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
