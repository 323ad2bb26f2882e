import type {
  ProviderAdapter,
  RouteAdapter,
  RouteKind,
  StreamTransformer,
  TransformContext,
} from "../../providers/types.ts";
import { errorChunkFailure } from "../../providers/stream/openai-chunks.ts";
import { isFormatRoute, loadFormat } from "./registry.ts";
import type { InboundFormat } from "./types.ts";

/**
 * A provider without a native route for an inbound format is reached through its chat adapter: the body is
 * translated to chat completions (and fitted to the target), the provider's answer is transformed to OpenAI chat
 * by the chat adapter as usual, then translated to the format's answer; streamed chat chunks become the format's
 * events. Made per request: the format's answer echoes fields of the request body.
 */
export function viaChat(format: InboundFormat, chat: RouteAdapter, body: Record<string, any>): RouteAdapter {
  const chatContext = (ctx: TransformContext): TransformContext => ({ ...ctx, route: "chat", includeUsage: true });
  const adapter: RouteAdapter = {
    async buildRequest(_body, ctx) {
      let chatBody = format.toChat(body);
      if (format.prepare) chatBody = await format.prepare(chatBody, body, ctx);
      return chat.buildRequest(chatBody, chatContext(ctx));
    },
    transformResponse(upstream, ctx) {
      const completion = chat.transformResponse(upstream, chatContext(ctx)) as Record<string, any>;
      return format.fromChat(completion, body, ctx);
    },
  };
  const chatStream = chat.stream;
  if (chatStream) {
    adapter.stream = {
      framing: chatStream.framing,
      createTransformer(ctx): StreamTransformer {
        const chunks = chatStream.createTransformer(chatContext(ctx));
        const converter = format.streamFromChat(body, ctx);
        const convert = (out: Array<object | string>) => {
          const events: object[] = [];
          for (const chunk of out) {
            // Providers whose chunks already are OpenAI's hand them over as JSON text.
            const parsed = typeof chunk === "string" ? JSON.parse(chunk) : chunk;
            // An OpenAI-shaped provider reports a failure inside its stream as an error chunk.
            const failure = errorChunkFailure(parsed);
            if (failure) throw failure;
            for (const event of converter.push(parsed)) events.push(event);
          }
          return events;
        };
        return {
          push: (event) => convert(chunks.push(event)),
          end: () => [...convert(chunks.end()), ...converter.end()],
        };
      },
    };
  }
  return adapter;
}

/**
 * The adapter that serves `route` on a provider for this request: its native one when it has one for the model,
 * else (for an inbound format) its chat adapter behind the format's translation; undefined when it has neither.
 */
export async function routeAdapterOf(
  adapter: ProviderAdapter,
  route: RouteKind,
  body: Record<string, any>,
): Promise<RouteAdapter | undefined> {
  const native = nativeRouteOf(adapter, route, body);
  if (native) return native;
  const chat = adapter.routes.chat;
  if (!isFormatRoute(route) || !chat) return undefined;
  const format = await loadFormat(route);
  return format ? viaChat(format, chat, body) : undefined;
}

/** The provider's own adapter for `route` and this request's model, when it has one (else it is translated). */
export function nativeRouteOf(
  adapter: ProviderAdapter,
  route: RouteKind,
  body: Record<string, any>,
): RouteAdapter | undefined {
  const native = adapter.routes[route];
  return native && (!native.supportsModel || native.supportsModel(String(body.model ?? ""))) ? native : undefined;
}
