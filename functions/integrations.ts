import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/integrations.ts";

/** Lambda entry point of the 'integrations' route family (infra/api.ts). */
export const handler = createLambdaHandler("integrations", handlers);
