import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/virtual-keys.ts";
import { family } from "../core/routes/table/virtual-keys.ts";

/** Lambda entry point of the 'virtual-keys' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
