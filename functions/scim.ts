import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/scim.ts";
import { family } from "../core/routes/table/scim.ts";

/** Lambda entry point of the 'scim' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
