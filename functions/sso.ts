import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/sso.ts";

/** Lambda entry point of the 'sso' route family (infra/api.ts). */
export const handler = createLambdaHandler("sso", handlers);
