import { batchHandlers } from "../../features/batches/handlers.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = batchHandlers;
