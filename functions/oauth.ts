import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/oauth.ts";
import { family } from "../core/routes/table/oauth.ts";

/** Lambda entry point of the 'oauth' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
