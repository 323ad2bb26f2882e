import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/policies.ts";
import { family } from "../core/routes/table/policies.ts";

/** Lambda entry point of the 'policies' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
