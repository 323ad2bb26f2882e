import { fileHandlers } from "../../files/handlers.ts";
import { uploadHandlers } from "../../files/uploads.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = { ...fileHandlers, ...uploadHandlers };
