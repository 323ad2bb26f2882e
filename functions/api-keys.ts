import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/api-keys.ts";
import { family } from "../core/routes/table/api-keys.ts";

/** Lambda entry point of the 'api-keys' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
