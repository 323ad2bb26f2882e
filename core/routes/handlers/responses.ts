import type { HandlerMap } from "../../http/context.ts";
import { createResponse } from "../../features/responses/create-response.ts";
import { storedResponseHandlers } from "../../features/responses/stored-handlers.ts";

export const handlers: HandlerMap = {
  createResponse,
  ...storedResponseHandlers,
};
