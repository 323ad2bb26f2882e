import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/integrations.ts";
import { family } from "../core/routes/table/integrations.ts";

/** Lambda entry point of the 'integrations' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
