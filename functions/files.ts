import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/files.ts";
import { family } from "../core/routes/table/files.ts";

/** Lambda entry point of the 'files' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
