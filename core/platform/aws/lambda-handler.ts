import { ensureOrganisation } from "../../control/organisation/bootstrap.ts";
import { createApp } from "../../http/app.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RouteFamily } from "../../routes/table.ts";
import { createFunctionUrlHandler, type StreamingLambdaHandler } from "./function-url-handler.ts";
import { servicesFromEnv } from "./services-from-env.ts";

/**
 * The Lambda entry point of one route family (functions/<family>.ts): a streaming function URL handler
 * serving just that family's routes, so each function bundles only its own handler module and its own part of
 * the route table (core/routes/table/<family>.ts; the whole table was 34 KB of every cold start).
 *
 * The app is built at the first invocation, once per container, not at module init:
 * - ensureOrganisation reads DynamoDB, and I/O started during init but not finished when init ends is frozen
 *   with the sandbox; inside an invocation it completes.
 * - A failure (store unreachable, bad setting) is answered as an OpenAI-shaped 5xx and retried by the next
 *   invocation, instead of an init crash that Lambda reports as a bare 502 and repeats for every request.
 * - Importing a function module has no side effects beyond middy's wrapper (tests, tooling).
 * The modules themselves (AWS SDK, zod, hono) are still imported statically, so their evaluation happens
 * in the init phase.
 */
export function createLambdaHandler(family: RouteFamily, handlers: HandlerMap): StreamingLambdaHandler {
  return createFunctionUrlHandler(async () => {
    const services = servicesFromEnv();
    await ensureOrganisation(services.stores.records, {
      adminKeySecret: services.settings.GATEWAY_BOOTSTRAP_ADMIN_KEY,
    });
    return createApp({ families: [family], handlers: { [family.name]: handlers }, services });
  });
}
