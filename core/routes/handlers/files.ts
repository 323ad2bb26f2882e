import { fileHandlers } from "../../files/handlers.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = fileHandlers;
