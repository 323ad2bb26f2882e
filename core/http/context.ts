import type { RequestContext } from "../services.ts";

export type Handler = (request: Request, ctx: RequestContext) => Promise<Response>;

/** A family module's handlers by the names the route table uses. */
export type HandlerMap = Record<string, Handler>;

/** What a platform passes with each request. */
export interface PlatformContext {
  waitUntil(work: Promise<unknown>): void;
  signal?: AbortSignal;
  /**
   * The request's path as received (no query string, not decoded), when the platform has it without parsing
   * the URL: routes without parameters are then found without the router.
   */
  path?: string;
}
