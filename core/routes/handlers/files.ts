import { fileHandlers } from "../../features/files/handlers.ts";
import { uploadHandlers } from "../../features/files/uploads.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = { ...fileHandlers, ...uploadHandlers };
