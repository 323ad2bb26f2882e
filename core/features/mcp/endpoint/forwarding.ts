import type { Client } from "@modelcontextprotocol/client";
import type { ServerContext } from "@modelcontextprotocol/server";
import { upstreamTooLargeIn } from "../../../http/errors.ts";
import { UPSTREAM_TOO_LARGE } from "../../../util/read-bounded.ts";
import { type AllowList, resourceMatcher } from "./access.ts";

/**
 * How one proxied request reaches the upstream: the caller's params with its own protocol envelope taken out
 * (the gateway's client sets its own, in the upstream's era), its answers to an `input_required` result
 * (`inputResponses`, `requestState`) put back, its cancellation and the timeout applied, and the upstream's
 * progress and log notifications passed back on the caller's stream. Calls relay the upstream's result as it
 * is (the SDK's accept-anything result schema), so a result the caller must complete is not reshaped; listings
 * without a cursor go through the SDK's list methods, whose cache honours the upstream's `ttlMs`.
 */

type Params = Record<string, unknown> & { _meta?: Record<string, unknown>; cursor?: string };
type Result = Record<string, unknown>;
type ListMethod = "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list";

/** `_meta` keys of the caller's own protocol envelope, which the gateway's upstream client sets for itself. */
const ENVELOPE_KEYS = new Set([
  "progressToken",
  "io.modelcontextprotocol/protocolVersion",
  "io.modelcontextprotocol/clientCapabilities",
  "io.modelcontextprotocol/clientInfo",
]);

export type Forwarding = Awaited<ReturnType<typeof forwarding>>;

/** What forwarding needs of the request (proxy-server.ts's hooks extend it). */
export interface ForwardingHooks {
  /** The connected upstream client (connected on first use). */
  upstream(): Promise<Client>;
  /** What a failed upstream call reports (upstream/client.ts upstreamFailureOf: an answer too large). */
  explain(error: unknown): unknown;
  allowed: AllowList;
  timeoutMs: number;
  /** What the request did, for its log. */
  note(details: {
    name?: string;
    arguments?: unknown;
    resultBytes?: number;
    toolError?: boolean;
    error?: { message: string; code: string | null };
  }): void;
}

export async function forwarding(hooks: ForwardingHooks) {
  const [{ ProtocolError }, { ResultSchema }, resourceOpen] = await Promise.all([
    import("@modelcontextprotocol/server"),
    import("@modelcontextprotocol/core"),
    resourceMatcher(hooks.allowed),
  ]);

  /** The upstream, with its log messages during this request passed on to the caller. */
  const upstreamFor = async (ctx: ServerContext): Promise<Client> => {
    const client = await hooks.upstream();
    client.setNotificationHandler("notifications/message", (notification) => {
      void ctx.mcpReq.notify(notification).catch(() => {});
    });
    return client;
  };

  /** What goes upstream: the caller's params without its envelope, plus its answers to an input request. */
  const forwardParams = (params: Params | undefined, ctx: ServerContext): Params => {
    const { _meta, ...rest } = params ?? {};
    const meta = Object.fromEntries(Object.entries(_meta ?? {}).filter(([key]) => !ENVELOPE_KEYS.has(key)));
    const state = ctx.mcpReq.requestState?.();
    return {
      ...rest,
      ...(Object.keys(meta).length > 0 ? { _meta: meta } : {}),
      ...(ctx.mcpReq.inputResponses ? { inputResponses: ctx.mcpReq.inputResponses } : {}),
      ...(typeof state === "string" ? { requestState: state } : {}),
    };
  };

  /** Request options: cancellation (the caller's, or a task's own), the timeout, progress passed back. */
  const options = (ctx: ServerContext, progress: boolean, signal?: AbortSignal) => {
    const token = ctx.mcpReq._meta?.progressToken;
    return {
      signal: signal ?? ctx.mcpReq.signal,
      timeout: hooks.timeoutMs,
      // An upstream's `input_required` result is the caller's to fulfil: relayed, never answered by the gateway.
      allowInputRequired: true,
      ...(progress && token !== undefined
        ? {
            onprogress: (update: { progress: number; total?: number; message?: string }) =>
              void ctx.mcpReq
                .notify({ method: "notifications/progress", params: { progressToken: token, ...update } })
                .catch(() => {}),
            resetTimeoutOnProgress: true,
          }
        : {}),
    };
  };

  return {
    upstreamFor,

    /** One request relayed as it is, its result too. */
    async call(
      ctx: ServerContext,
      method: string,
      params: Params | undefined,
      how: { progress?: boolean; signal?: AbortSignal } = {},
    ): Promise<Result> {
      const client = await upstreamFor(ctx);
      const request = { method, params: forwardParams(params, ctx) };
      return (await client.request(
        request as never,
        ResultSchema,
        options(ctx, how.progress === true, how.signal),
      )) as Result;
    },

    /**
     * A 2025-era request with no 2026-07-28 counterpart (`logging/setLevel`, `resources/subscribe` and
     * `unsubscribe`): forwarded to a 2025-era upstream, acknowledged for a 2026-07-28 one (log levels travel per
     * request there, and subscriptions on a listen stream the gateway does not relay).
     */
    async legacyOnly(ctx: ServerContext, method: string, params: Params | undefined): Promise<Result> {
      const client = await upstreamFor(ctx);
      if (client.getProtocolEra() === "modern") return {};
      return this.call(ctx, method, params);
    },

    /** A listing: a cursor's page as the upstream gives it, else every page through the SDK's cache. */
    async list(ctx: ServerContext, method: ListMethod, params: Params | undefined): Promise<Result> {
      if (params?.cursor) return this.call(ctx, method, params);
      const client = await upstreamFor(ctx);
      const opts = options(ctx, false);
      const page =
        method === "tools/list"
          ? await client.listTools(undefined, opts)
          : method === "prompts/list"
            ? await client.listPrompts(undefined, opts)
            : method === "resources/list"
              ? await client.listResources(undefined, opts)
              : await client.listResourceTemplates(undefined, opts);
      // The listing is filtered per server and caller: never share it beyond them.
      return { ...(page as Result), cacheScope: "private" };
    },

    resourceAllowed: resourceOpen,

    /** A hidden (or unknown) capability, refused as MCP refuses an unknown one: -32602, a resource's uri in data. */
    hidden(kind: string, name: string): Error {
      const data = kind === "Resource" ? { uri: name } : undefined;
      return new ProtocolError(-32602, `${kind} '${name}' is not available on this MCP server.`, data);
    },

    /** A handler whose failure is noted for the request's log (the SDK then answers it as a JSON-RPC error). */
    noted<A extends unknown[], R>(handler: (...args: A) => Promise<R>) {
      return async (...args: A): Promise<R> => {
        try {
          return await handler(...args);
        } catch (thrown) {
          const error = hooks.explain(thrown);
          const tooLarge = upstreamTooLargeIn(error);
          if (tooLarge) {
            // The caller's wire format: a JSON-RPC error whose data names the code (a lone request's is answered
            // with HTTP 502: upstream/status.ts).
            hooks.note({ error: { message: tooLarge.message, code: UPSTREAM_TOO_LARGE } });
            throw new ProtocolError(-32603, tooLarge.message, { code: UPSTREAM_TOO_LARGE });
          }
          const code = (error as { code?: unknown }).code;
          hooks.note({ error: { message: (error as Error).message, code: `jsonrpc_${code ?? -32603}` } });
          throw error;
        }
      };
    },
  };
}
