import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/embeddings.ts";
import { family } from "../core/routes/table/embeddings.ts";

/** Lambda entry point of the 'embeddings' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
