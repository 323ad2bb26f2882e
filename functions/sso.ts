import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/sso.ts";
import { family } from "../core/routes/table/sso.ts";

/** Lambda entry point of the 'sso' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
