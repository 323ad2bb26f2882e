import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/images.ts";
import { family } from "../core/routes/table/images.ts";

/** Lambda entry point of the 'images' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
