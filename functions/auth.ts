import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/auth.ts";
import { family } from "../core/routes/table/auth.ts";

/** Lambda entry point of the 'auth' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
