import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/rerank.ts";
import { family } from "../core/routes/table/rerank.ts";

/** Lambda entry point of the 'rerank' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
