import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/model-pricing.ts";
import { family } from "../core/routes/table/model-pricing.ts";

/** Lambda entry point of the 'model-pricing' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
