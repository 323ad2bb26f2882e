import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/providers.ts";
import { family } from "../core/routes/table/providers.ts";

/** Lambda entry point of the 'providers' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
