import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/blobs.ts";
import { family } from "../core/routes/table/blobs.ts";

/** Lambda entry point of the 'blobs' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
