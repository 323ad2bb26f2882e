import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/configs.ts";
import { family } from "../core/routes/table/configs.ts";

/** Lambda entry point of the 'configs' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
